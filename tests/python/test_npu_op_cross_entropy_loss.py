"""torch_npu.npu_cross_entropy_loss against torch's cross_entropy (its documented meaning:
log_softmax and nll fused) in plain fp32 torch, with the gradient of the input (tolerances:
overlay_support.npu_op_checks)."""

import pytest
import torch
import torch.nn.functional as F

from overlay_support.npu_op_checks import DTYPES, assert_close, on_npu, randn, torch_npu

TARGET = torch.tensor([0, 3, 2, -100, 4, 1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    "weighted,smoothing", [(False, 0.0), (True, 0.0), (False, 0.1), (True, 0.2)]
)
def test_cross_entropy_loss(dtype, reduction, weighted, smoothing):
    x = randn(6, 5, seed=1, scale=3).to(dtype)
    weight = torch.rand(5, generator=torch.Generator().manual_seed(2)) + 0.1 if weighted else None
    leaf = on_npu(x, grad=True)
    loss, log_prob, zloss, lse = torch_npu.npu_cross_entropy_loss(
        leaf,
        on_npu(TARGET),
        None if weight is None else on_npu(weight),
        reduction=reduction,
        label_smoothing=smoothing,
    )
    ref = x.float().requires_grad_()
    want = F.cross_entropy(
        ref, TARGET, weight=weight, reduction=reduction, label_smoothing=smoothing
    )
    assert_close(loss, want.reshape(-1), dtype, "loss")
    assert_close(log_prob, torch.log_softmax(x.float(), 1), dtype, "log_prob")
    assert zloss.numel() == 0 and lse.numel() == 0
    grad = randn(*loss.shape, seed=3).to(dtype)
    loss.backward(on_npu(grad))
    want.backward(grad.float().reshape(want.shape))
    assert_close(leaf.grad, ref.grad, dtype, "input gradient")


def test_bad_arguments_are_refused():
    x = on_npu(randn(3, 4))
    with pytest.raises(RuntimeError, match="int64"):
        torch_npu.npu_cross_entropy_loss(x, on_npu(torch.tensor([0, 1, 2], dtype=torch.int32)))
    with pytest.raises(RuntimeError, match="z-loss"):
        torch_npu.npu_cross_entropy_loss(x, on_npu(torch.tensor([0, 1, 2])), return_zloss=True)
    with pytest.raises(RuntimeError, match=r"lie in \[0, 4\)"):
        torch_npu.npu_cross_entropy_loss(x, on_npu(torch.tensor([0, 1, 7])))
