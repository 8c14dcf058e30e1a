"""torch_npu.npu_softmax_cross_entropy_with_logits against ``-sum(labels * log_softmax)``
per row in plain torch, and its gradient against the NPU kernel's ``(softmax - labels) *
grad`` (tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    assert_close,
    check_against_formula,
    check_saturation,
    on_npu,
    randn,
    torch_npu,
)

op = torch_npu.npu_softmax_cross_entropy_with_logits


def labels_of(rows, classes, seed=2):
    return torch.softmax(randn(rows, classes, seed=seed, scale=3), -1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_loss_and_gradient_match_the_formula(dtype):
    labels = labels_of(5, 7)
    check_against_formula(
        lambda x, y: op(x, y),
        lambda x, y: -(y * torch.log_softmax(x, -1)).sum(-1),
        [randn(5, 7, scale=4), labels],
        dtype,
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_gradient_is_softmax_minus_labels_even_when_labels_do_not_sum_to_one(dtype):
    """The NPU kernel's backprop is softmax - labels; the loss formula's derivative would be
    softmax * sum(labels) - labels."""
    features, labels = randn(3, 4, scale=2).to(dtype), (randn(3, 4, seed=5).abs() * 2).to(dtype)
    x = on_npu(features, grad=True)
    grad = randn(3, seed=7).to(dtype)
    op(x, on_npu(labels)).backward(on_npu(grad))
    f = features.float()
    backprop = (torch.softmax(f, -1) - labels.float()).to(dtype).float()
    assert_close(x.grad, backprop * grad.float().unsqueeze(-1), dtype, "gradient")
    direct = torch_npu.npu_softmax_cross_entropy_with_logits_backward(
        on_npu(grad), on_npu(features), on_npu(labels)
    )
    assert torch.equal(direct.cpu(), x.grad.cpu())


def test_fp16_loss_overflow_saturates():
    features = on_npu(torch.tensor([[70000.0, -70000.0]]), torch.float16)  # saturated input
    labels = on_npu(torch.tensor([[0.0, 1.0]]), torch.float16)  # loss: 131008 in fp32
    check_saturation(op, [features, labels])


@pytest.mark.parametrize(
    "features, labels, message",
    [
        (randn(6), randn(6), "2-D"),
        (randn(2, 3), randn(3, 2), "shape and dtype"),
        (randn(2, 3), randn(2, 3).double(), "shape and dtype"),
    ],
)
def test_bad_arguments_are_refused_by_name(features, labels, message):
    with pytest.raises(RuntimeError, match=message):
        op(on_npu(features), on_npu(labels))
