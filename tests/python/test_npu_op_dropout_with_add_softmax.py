"""torch_npu.npu_dropout_with_add_softmax against ``softmax(x1 + alpha * self) * mask / (1 - p)``
in plain torch, with the NPU's byte mask padded to a multiple of 128 elements (tolerances:
overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    assert_close,
    check_overflow,
    on_npu,
    randn,
    torch_npu,
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("prob", [0.0, 0.1])
def test_forward_backward(dtype, prob):
    alpha = 0.125
    scores = on_npu(randn(2, 4, 8, 16, scale=4), dtype, grad=True)
    # BERT's additive attention mask: 0 or -10000, broadcast over heads and rows.
    mask_add = torch.zeros(2, 4, 8, 16)
    mask_add[..., 12:] = -10000.0
    x1 = on_npu(mask_add, dtype, grad=True)
    mask, softmax_out, out = torch_npu.npu_dropout_with_add_softmax(scores, x1, alpha, prob, -1)
    n = scores.numel()
    assert mask.dtype == torch.uint8 and mask.shape == (((n + 127) // 128) * 128,)
    keep = mask.cpu()[:n].float().reshape(scores.shape)
    if prob == 0.0:
        assert bool((keep == 1).all())
    ref_scores = scores.detach().cpu().float().requires_grad_()
    ref_x1 = x1.detach().cpu().float().requires_grad_()
    ref_softmax = torch.softmax(ref_x1 + alpha * ref_scores, dim=-1)
    ref_out = ref_softmax * keep / (1 - prob)
    assert_close(softmax_out, ref_softmax, dtype, "softmax_out")
    assert_close(out, ref_out, dtype, "dropout_out")
    assert not softmax_out.requires_grad, "only the dropout output is differentiable"
    grad = randn(*out.shape, seed=9).to(dtype)
    out.backward(on_npu(grad))
    ref_out.backward(grad.float())
    assert_close(scores.grad, ref_scores.grad, dtype, "gradient of self")
    assert_close(x1.grad, ref_x1.grad, dtype, "gradient of x1")


def test_keep_fraction():
    torch.manual_seed(0)
    mask, _, _ = torch_npu.npu_dropout_with_add_softmax(
        on_npu(torch.zeros(4, 4, 32, 128)), on_npu(torch.zeros(4, 4, 32, 128)), 1.0, 0.3, -1
    )
    assert abs(mask.cpu().float().mean().item() - 0.7) < 0.02


def test_fp16_gradient_overflow_saturates():
    scores = on_npu(torch.tensor([[0.0, 0.0]]), torch.float16)
    x1 = on_npu(torch.zeros(1, 2), torch.float16)

    def run():
        s = scores.detach().clone().requires_grad_()
        _, _, out = torch_npu.npu_dropout_with_add_softmax(s, x1, 4.0, 0.0, -1)
        # softmax gradient: p (g - sum(g p)) = 0.5 * (g0 - g1) / 2; times alpha 4: g0 - g1.
        out.backward(on_npu(torch.tensor([[60000.0, -60000.0]]), torch.float16))
        return s.grad

    check_overflow(run)
