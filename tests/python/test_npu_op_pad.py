"""torch_npu.npu_pad: zeros around the input with (before, after) pairs from the first
dimension on, as the NPU's Pad reads them; no gradient, as torch_npu defines none (torch's
autograd fallback decides)."""

import pytest
import torch

from overlay_support.npu_op_checks import check_no_derivative, DTYPES, on_npu, torch_npu


def test_npu_pad_matches_torch_npu_s_test():
    got = torch_npu.npu_pad(on_npu(torch.ones(2, 2)), (1, 1, 1, 1)).cpu()
    want = torch.tensor([[0.0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]])
    assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_npu_pad_reads_pairs_from_the_first_dimension(dtype):
    x = torch.arange(6.0).reshape(2, 3).to(dtype)
    got = torch_npu.npu_pad(on_npu(x), [1, 0, 0, 2])
    assert got.dtype == dtype and got.device.type == "npu" and got.shape == (3, 5)
    want = torch.zeros(3, 5, dtype=dtype)
    want[1:, :3] = x
    assert torch.equal(got.cpu(), want)


def test_npu_pad_takes_missing_pairs_as_zero_and_ignores_extra_ones():
    x = on_npu(torch.ones(2, 2, 2))
    assert torch_npu.npu_pad(x, [1, 1]).shape == (4, 2, 2)
    assert torch_npu.npu_pad(on_npu(torch.ones(2)), [0, 1, 5, 5]).shape == (3,)


def test_npu_pad_refuses_negative_paddings():
    with pytest.raises(RuntimeError, match="paddings must be >= 0"):
        torch_npu.npu_pad(on_npu(torch.ones(2, 2)), [0, -1])


def test_npu_pad_has_no_derivative_as_on_the_npu():
    """torch_npu registers no autograd kernel for npu_pad: torch's fallback decides, in its
    mode (Huawei's test_autograd_fallback.py): "warn" warns at backward and gives no gradient,
    "nothing" (and torch 1.x) leaves the result outside the graph."""
    pad = lambda x: torch_npu.npu_pad(x, [1, 1])  # noqa: E731
    check_no_derivative("npu_pad", on_npu(torch.ones(2, 2), grad=True), pad)
    set_mode = getattr(torch._C, "_set_autograd_fallback_mode", None)
    if set_mode is None:
        return  # torch 1.x: one behaviour, checked above
    previous = torch._C._get_autograd_fallback_mode()
    set_mode("nothing" if previous == "warn" else "warn")
    try:
        check_no_derivative("npu_pad", on_npu(torch.ones(2, 2), grad=True), pad)
    finally:
        set_mode(previous)
    out = pad(on_npu(torch.ones(2, 2), grad=True))
    if previous == "warn":
        assert out.requires_grad
