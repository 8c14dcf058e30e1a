"""``torch_npu.npu_softmax_cross_entropy_with_logits(input, labels)``: per row of the 2-D
features ``input`` ``[batch, classes]``, ``-sum(labels * log_softmax(input))``, in fp32 and
stored in ``input``'s dtype. Its gradient (``npu_softmax_cross_entropy_with_logits_backward(grad,
input, labels)``) is the NPU kernel's: ``softmax(input) - labels``, stored in ``input``'s dtype,
times the upstream gradient of the row; ``labels`` get none."""

from __future__ import annotations

import torch

from ._precision import store, upcast
from ._registry import operator


def _check(features: torch.Tensor, labels: torch.Tensor) -> None:
    if features.dim() != 2:
        raise RuntimeError(
            "npu_softmax_cross_entropy_with_logits: features must be 2-D "
            f"[batch, classes], got {features.dim()}-D {tuple(features.shape)}"
        )
    if labels.shape != features.shape or labels.dtype != features.dtype:
        raise RuntimeError(
            "npu_softmax_cross_entropy_with_logits: labels must have the shape "
            f"and dtype of features ({tuple(features.shape)}, {features.dtype}), "
            f"got {tuple(labels.shape)}, {labels.dtype}"
        )


def _backprop(features: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    x = upcast(features)
    return store(torch.softmax(x, -1) - upcast(labels), features.dtype)


class _SoftmaxCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, labels):  # noqa: D102 - torch.autograd.Function protocol
        ctx.save_for_backward(features, labels)
        loss = -(upcast(labels) * torch.log_softmax(upcast(features), -1)).sum(-1)
        return store(loss, features.dtype)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        features, labels = ctx.saved_tensors
        return npu_softmax_cross_entropy_with_logits_backward(grad, features, labels), None


@operator
def npu_softmax_cross_entropy_with_logits(
    input: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    _check(input, labels)
    return _SoftmaxCrossEntropy.apply(input, labels)


@operator
def npu_softmax_cross_entropy_with_logits_backward(
    grad: torch.Tensor, input: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    _check(input, labels)
    with torch.no_grad():
        return _backprop(input, labels) * grad.unsqueeze(-1)
