"""``torch_npu.npu_masked_causal_conv1d(input, weight, *, mask=None)``: the causal depthwise
convolution of linear-attention models over ``input`` ``[S, B, H]`` with a window of
``W = 3`` (``weight`` ``[3, H]``): ``y[s] = w[0] x[s - 2] + w[1] x[s - 1] + w[2] x[s]`` per
channel (a depthwise ``conv1d`` padded by two steps on the left, the past before the sequence
zero), then ``y[s, b] = 0`` where ``mask[b, s]`` is False. Computed in fp32, stored once; its
gradient is ``npu_masked_causal_conv1d_backward(grad_output, input, weight, *, mask=None) ->
(grad_input, grad_weight)``, which torch_npu binds as the backward."""

from __future__ import annotations

from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from ._precision import store, upcast
from ._registry import operator

_WINDOW = 3


def _check(
    name: str, input: torch.Tensor, weight: torch.Tensor, mask: Optional[torch.Tensor]
) -> None:
    if input.dim() != 3:
        raise RuntimeError(f"{name}: input must be [S, B, H], got {tuple(input.shape)}")
    if tuple(weight.shape) != (_WINDOW, input.shape[2]):
        raise RuntimeError(
            f"{name}: weight must be [3, H] = [3, {input.shape[2]}], got {tuple(weight.shape)}"
        )
    if weight.dtype != input.dtype:
        raise RuntimeError(
            f"{name}: input ({input.dtype}) and weight ({weight.dtype}) must have one dtype"
        )
    if mask is not None and (
        mask.dtype != torch.bool or tuple(mask.shape) != (input.shape[1], input.shape[0])
    ):
        raise RuntimeError(
            f"{name}: mask must be bool [B, S] = [{input.shape[1]}, "
            f"{input.shape[0]}], got {mask.dtype} {tuple(mask.shape)}"
        )


def _conv(x: torch.Tensor, w: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
    """fp32 [S, B, H] -> [S, B, H]."""
    s, b, h = x.shape
    lines = F.pad(x.permute(1, 2, 0), (_WINDOW - 1, 0))  # [B, H, S + 2]
    y = F.conv1d(lines, w.t().unsqueeze(1), groups=h).permute(2, 0, 1)
    if mask is not None:
        y = y * mask.t().unsqueeze(-1).to(y.dtype)
    return y


@operator
def npu_masked_causal_conv1d(
    input: torch.Tensor, weight: torch.Tensor, *, mask: Optional[torch.Tensor] = None
) -> torch.Tensor:
    _check("npu_masked_causal_conv1d", input, weight, mask)
    return store(_conv(upcast(input).float(), upcast(weight).float(), mask), input.dtype)


@operator
def npu_masked_causal_conv1d_backward(
    grad_output: torch.Tensor,
    input: torch.Tensor,
    weight: torch.Tensor,
    *,
    mask: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_masked_causal_conv1d_backward"
    _check(name, input, weight, mask)
    if grad_output.shape != input.shape:
        raise RuntimeError(
            f"{name}: grad_output {tuple(grad_output.shape)} must have input's "
            f"shape {tuple(input.shape)}"
        )
    with torch.enable_grad():
        x = upcast(input).detach().float().requires_grad_()
        w = upcast(weight).detach().float().requires_grad_()
        y = _conv(x, w, mask)
        gx, gw = torch.autograd.grad(y, (x, w), upcast(grad_output).float())
    return store(gx, input.dtype), store(gw, weight.dtype)
