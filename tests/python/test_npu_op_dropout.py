"""torch_npu's bit-mask dropout (_npu_dropout / npu_dropout, npu_dropout_gen_mask,
npu_dropout_do_mask, npu_dropout_backward) against ``x * mask / (1 - p)`` in plain torch, with
the mask layout of the NPU: one bit per element, least significant bit first, padded to a
multiple of 128 elements (tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    assert_close,
    check_saturation,
    on_npu,
    randn,
    torch_npu,
)


def bits_of(mask, n):
    """The mask's first n bits, decoded here independently (LSB first)."""
    values = mask.cpu().tolist()
    return torch.tensor([(values[i // 8] >> (i % 8)) & 1 for i in range(n)], dtype=torch.float32)


@pytest.mark.parametrize("name", ["_npu_dropout", "npu_dropout"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_npu_dropout_forward_backward(name, dtype):
    p = 0.3
    x = on_npu(randn(5, 37, scale=2), dtype, grad=True)
    out, mask = getattr(torch_npu, name)(x, p)
    assert mask.dtype == torch.uint8 and mask.device.type == "npu"
    assert mask.shape == (((5 * 37 + 127) // 128) * 16,)
    bits = bits_of(mask, x.numel()).reshape(x.shape)
    assert_close(out, x.detach().cpu().float() * bits / (1 - p), dtype, "forward")
    grad = randn(5, 37, seed=4).to(dtype)
    out.backward(on_npu(grad))
    assert_close(x.grad, grad.float() * bits / (1 - p), dtype, "gradient")


def test_documented_example_shapes():
    out, mask = torch_npu._npu_dropout(on_npu(torch.tensor([1.0, 2.0, 3.0, 4.0])), 0.3)
    assert out.shape == (4,) and mask.shape == (16,)
    kept = bits_of(mask, 4)
    torch.testing.assert_close(out.cpu(), torch.tensor([1.0, 2.0, 3.0, 4.0]) * kept / 0.7)


def test_keep_fraction_and_seeding():
    torch.manual_seed(7)
    _, mask = torch_npu._npu_dropout(on_npu(torch.ones(20000)), 0.25)
    kept = bits_of(mask, 20000).mean().item()
    assert abs(kept - 0.75) < 0.02
    torch.manual_seed(7)
    _, again = torch_npu._npu_dropout(on_npu(torch.ones(20000)), 0.25)
    assert torch.equal(mask.cpu(), again.cpu())


def test_gen_mask_do_mask_and_backward():
    x = on_npu(randn(3, 50))
    mask = torch_npu.npu_dropout_gen_mask(x.shape, 0.5, dtype=torch.float32, device=x.device)
    assert mask.shape == (32,) and mask.dtype == torch.uint8 and mask.device.type == "npu"
    out, same = torch_npu.npu_dropout_do_mask(x, mask, 0.5)
    assert same is mask
    bits = bits_of(mask, 150).reshape(3, 50)
    torch.testing.assert_close(out.cpu(), x.cpu() * bits * 2)
    grad = on_npu(randn(3, 50, seed=3))
    torch.testing.assert_close(
        torch_npu.npu_dropout_backward(grad, mask, 0.5).cpu(), grad.cpu() * bits * 2
    )


def test_fp16_overflow_saturates():
    # Kept elements are scaled by 1 / (1 - p) = 2: 40000 becomes 80000.
    x = on_npu(torch.full((256,), 40000.0), torch.float16)
    check_saturation(lambda x: torch_npu._npu_dropout(x, 0.5)[0], [x])
