"""torch.nn.DropoutWithByteMask and torch_npu's byte-mask dropout (_dropout_with_byte_mask,
dropout_with_byte_mask, torch.nn.functional.dropout_with_byte_mask, the contrib spellings)
against ``x * mask / (1 - p)`` in plain torch, the mask one uint8 per element, 1 = kept
(tolerances: overlay_support.npu_op_checks)."""

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


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_with_byte_mask_forward_backward(dtype):
    p = 0.2
    x = on_npu(randn(4, 9, 7), dtype, grad=True)
    out, mask = torch_npu._dropout_with_byte_mask(x, p)
    assert mask.dtype == torch.uint8 and mask.shape == x.shape and mask.device.type == "npu"
    assert set(mask.cpu().unique().tolist()) <= {0, 1}
    keep = mask.cpu().float()
    assert_close(out, x.detach().cpu().float() * keep / (1 - p), dtype, "forward")
    grad = randn(4, 9, 7, seed=5).to(dtype)
    out.backward(on_npu(grad))
    assert_close(x.grad, grad.float() * keep / (1 - p), dtype, "gradient")
    back = torch_npu._dropout_with_byte_mask_backward(on_npu(grad), mask, p)
    assert_close(back, grad.float() * keep / (1 - p), dtype, "_dropout_with_byte_mask_backward")


def test_module_in_training_and_eval():
    torch.manual_seed(3)
    m = torch.nn.DropoutWithByteMask(p=0.4)
    x = on_npu(torch.ones(100, 100))
    y = m(x)
    assert y.device.type == "npu" and y.shape == x.shape
    values = set(torch.round(y.cpu() * 1000).unique().tolist())
    assert values == {0.0, round(1000 / 0.6)}
    assert abs((y.cpu() != 0).float().mean().item() - 0.6) < 0.03
    m.eval()
    assert m(x) is x


def test_functional_forms_and_edges():
    x = on_npu(randn(8, 8))
    assert torch_npu.dropout_with_byte_mask(x, 0.0, True) is x
    assert torch_npu.dropout_with_byte_mask(x, 0.5, False) is x
    assert torch.count_nonzero(torch_npu.dropout_with_byte_mask(x, 1.0, True).cpu()) == 0
    y = torch.nn.functional.dropout_with_byte_mask(x, p=0.5, training=True)
    assert y.shape == x.shape
    with pytest.raises(ValueError):
        torch.nn.functional.dropout_with_byte_mask(x, p=1.5)
    with pytest.raises(ValueError):
        torch.nn.functional.dropout_with_byte_mask(x, p=0.5, inplace=True)


def test_contrib_spellings():
    from torch_npu.contrib.function import npu_functional
    from torch_npu.contrib.module import npu_modules
    import torch_npu.contrib.module as module

    assert npu_modules.DropoutWithByteMask is torch.nn.DropoutWithByteMask
    assert module.DropoutWithByteMask is torch.nn.DropoutWithByteMask
    assert npu_functional.dropout_with_byte_mask is torch.nn.functional.dropout_with_byte_mask
    assert isinstance(npu_modules.DropoutWithByteMask(p=0.1, max_seed=7), torch.nn.Module)


def test_fp16_overflow_saturates():
    x = on_npu(torch.full((64,), 40000.0), torch.float16)
    check_saturation(lambda x: torch_npu._dropout_with_byte_mask(x, 0.5)[0], [x])
