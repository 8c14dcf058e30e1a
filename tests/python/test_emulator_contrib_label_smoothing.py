"""torch_npu.contrib.module.LabelSmoothingCrossEntropy on the emulated NPU, against its formula
in plain torch on the host (fp32): per row ``-sum(label * log_softmax(pred))`` with the class
at ``1 - s`` and the others at ``s / (C - 1)``, averaged over the batch; and its gradient."""

import pytest
import torch

from overlay_support.npu_op_checks import FP16, FP32, on_npu, randn
from torch_npu.contrib.module import LabelSmoothingCrossEntropy


def _formula(pred: torch.Tensor, target: torch.Tensor, classes: int, smooth: float):
    labels = torch.full_like(pred, smooth / (classes - 1))
    labels[torch.arange(len(target)), target.long()] = 1.0 - smooth
    return -(labels * torch.log_softmax(pred, dim=1)).sum(dim=1).mean()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("smooth", [0.0, 0.1])
def test_loss_and_gradient_match_the_formula(dtype, smooth):
    pred = randn(4, 10, seed=3).to(dtype).float()  # the NPU's inputs, as fp32 for the formula
    target = torch.tensor([3.0, 0.0, 9.0, 3.0])  # float classes, as Huawei's test passes them
    want_pred = pred.clone().requires_grad_(True)
    want = _formula(want_pred, target, 10, smooth)
    want.backward()
    got_pred = on_npu(pred, dtype, grad=True)
    got = LabelSmoothingCrossEntropy(10, smooth)(got_pred, on_npu(target))
    assert got.dtype == torch.float32 and got.dim() == 0 and got.device.type == "npu"
    got.backward()
    tol = FP32 if dtype == torch.float32 else FP16
    torch.testing.assert_close(got.detach().cpu(), want.detach(), **tol)
    assert got_pred.grad.dtype == dtype
    torch.testing.assert_close(got_pred.grad.cpu().float(), want_pred.grad, **tol)


def test_refuses_what_it_cannot_compute():
    with pytest.raises(ValueError, match="num_classes must be at least 2"):
        LabelSmoothingCrossEntropy(1)
    with pytest.raises(RuntimeError, match=r"pred must be \(batch, classes\)"):
        LabelSmoothingCrossEntropy(10)(on_npu(torch.zeros(10)), on_npu(torch.zeros(1)))
