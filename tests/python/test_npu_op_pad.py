"""torch_npu.npu_pad: zeros around the input with (before, after) pairs from the first
dimension on, as the NPU's Pad reads them; no gradient, as torch_npu defines none."""

import pytest
import torch

from overlay_support.npu_op_checks import DTYPES, on_npu, torch_npu


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


def test_a_backward_through_npu_pad_raises_as_on_the_npu():
    x = on_npu(torch.ones(2, 2), grad=True)
    out = torch_npu.npu_pad(x, [1, 1])
    with pytest.raises(RuntimeError, match="derivative for 'npu_pad' is not implemented"):
        out.sum().backward()
