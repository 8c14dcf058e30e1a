"""``torch_npu.npu_deformable_conv2d`` and its gradient ``npu_deformable_conv2dbk``: the NPU's
deformable convolution (DCNv2, DCNv1 with ``modulated=False``), as the DCN layers of Ascend's
CenterNet, FairMOT, SOLO, YOLACT++ and DB ports call it from their autograd Functions.

Layouts as op-plugin documents and tests them: ``stride``, ``padding`` and ``dilation`` are
4-lists (``[1, 1, sh, sw]``, ``[top, bottom, left, right]``, ``[1, 1, dh, dw]``),
``kernel_size`` is ``[kh, kw]``, and ``offset`` is ``(N, parts * dg * kh * kw, Ho, Wo)`` with
the parts in that order: every x offset, every y offset, then (modulated) every mask value, each
part ordered by deformable group, then kernel row, then kernel column (mmcv interleaves y and x;
the ports reorder to this). Kernel tap ``(i, j)`` of output pixel ``(ho, wo)`` samples the input
at ``y = ho * sh - top + i * dh + dy``, ``x = wo * sw - left + j * dw + dx`` bilinearly, corners
outside the map counting 0, times its mask. The samples form ``offset_out``
``(N, C, Ho * kh, Wo * kw)`` (tap ``(i, j)`` of ``(ho, wo)`` at row ``ho * kh + i``, column
``wo * kw + j``), which a convolution with stride ``(kh, kw)`` turns into the output; both are
returned. fp16 is computed in fp32 and stored once.

``npu_deformable_conv2dbk(input, grad_output, offset_out, weight, offset, ...)`` gives
``(grad_input, grad_weight, grad_offset, grad_bias)``, the offset gradient in the offset's layout
(mask part included). torch_npu defines the forward's derivative through it, and so does the
emulator: ``npu_deformable_conv2d`` is differentiable in input, weight, offset and bias.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from . import _precision
from ._registry import operator

Shape4 = Tuple[int, int, int, int]


class _Geometry:
    """The checked arguments of one call."""

    def __init__(
        self,
        op: str,
        input: torch.Tensor,
        weight: torch.Tensor,  # noqa: A002
        offset: torch.Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
        groups: int,
        deformable_groups: int,
        modulated: bool,
    ) -> None:
        if input.dim() != 4 or weight.dim() != 4 or offset.dim() != 4:
            raise RuntimeError(
                f"{op}: input, weight and offset must be 4-D (NCHW), got "
                f"{tuple(input.shape)}, {tuple(weight.shape)} and "
                f"{tuple(offset.shape)}"
            )
        self.kh, self.kw = _pair(op, "kernel_size", kernel_size)
        if tuple(weight.shape[2:]) != (self.kh, self.kw):
            raise RuntimeError(
                f"{op}: kernel_size {list(kernel_size)} is not the weight's "
                f"(kh, kw) = {tuple(weight.shape[2:])}"
            )
        _, _, self.sh, self.sw = _four(op, "stride", stride, positive=True)
        self.top, self.bottom, self.left, self.right = _four(op, "padding", padding)
        _, _, self.dh, self.dw = _four(op, "dilation", dilation, positive=True)
        batch, channels, height, width = input.shape
        if (
            groups < 1
            or deformable_groups < 1
            or channels % groups
            or channels % deformable_groups
            or weight.size(0) % groups
            or weight.size(1) * groups != channels
        ):
            raise RuntimeError(
                f"{op}: {channels} input channels, weight {tuple(weight.shape)}, "
                f"groups {groups} and deformable_groups {deformable_groups} do "
                f"not fit"
            )
        self.groups, self.dg, self.modulated = groups, deformable_groups, modulated
        self.out_h = (height + self.top + self.bottom - (self.kh - 1) * self.dh - 1) // self.sh + 1
        self.out_w = (width + self.left + self.right - (self.kw - 1) * self.dw - 1) // self.sw + 1
        if self.out_h < 1 or self.out_w < 1:
            raise RuntimeError(
                f"{op}: the output would be empty ({self.out_h} x {self.out_w}) "
                f"for input {height} x {width}"
            )
        parts = 3 if modulated else 2
        want = (batch, parts * deformable_groups * self.kh * self.kw, self.out_h, self.out_w)
        if tuple(offset.shape) != want:
            raise RuntimeError(
                f"{op}: offset must have shape (N, {parts} * deformable_groups * "
                f"kh * kw, Ho, Wo) = {want}, got {tuple(offset.shape)}"
            )


def _pair(op: str, name: str, value: Sequence[int]) -> Tuple[int, int]:
    if len(value) != 2 or min(value) < 1:
        raise RuntimeError(f"{op}: {name} must be 2 positive ints, got {list(value)}")
    return int(value[0]), int(value[1])


def _four(op: str, name: str, value: Sequence[int], positive: bool = False) -> Shape4:
    if len(value) != 4 or min(value) < (1 if positive else 0):
        kind = "positive" if positive else "non-negative"
        raise RuntimeError(f"{op}: {name} must be 4 {kind} ints (NCHW), got {list(value)}")
    return int(value[0]), int(value[1]), int(value[2]), int(value[3])


def _sampled(
    input: torch.Tensor,
    offset: torch.Tensor,  # noqa: A002
    geo: _Geometry,
) -> torch.Tensor:
    """offset_out ``(N, C, Ho * kh, Wo * kw)`` in fp32, differentiable in input and offset."""
    batch, channels, height, width = input.shape
    taps, dg = geo.kh * geo.kw, geo.dg
    shape = (batch, dg, taps, geo.out_h, geo.out_w)
    dx = offset[:, : dg * taps].reshape(shape)
    dy = offset[:, dg * taps : 2 * dg * taps].reshape(shape)
    dev, f32 = input.device, torch.float32
    rows = (
        torch.arange(geo.out_h, device=dev, dtype=f32).view(-1, 1) * geo.sh
        - geo.top
        + (torch.arange(geo.kh, device=dev, dtype=f32) * geo.dh)
        .repeat_interleave(geo.kw)
        .view(-1, 1, 1)
    )  # (taps, Ho, 1)
    cols = (
        torch.arange(geo.out_w, device=dev, dtype=f32).view(1, -1) * geo.sw
        - geo.left
        + (torch.arange(geo.kw, device=dev, dtype=f32) * geo.dw).repeat(geo.kh).view(-1, 1, 1)
    )  # (taps, 1, Wo)
    y, x = rows + dy, cols + dx  # (N, dg, taps, Ho, Wo)
    y0, x0 = torch.floor(y), torch.floor(x)
    ly, lx = y - y0, x - x0
    planes = input.reshape(batch, dg, channels // dg, height * width)
    points = taps * geo.out_h * geo.out_w
    value = 0
    for cy, cx, weight in (
        (y0, x0, (1 - ly) * (1 - lx)),
        (y0, x0 + 1, (1 - ly) * lx),
        (y0 + 1, x0, ly * (1 - lx)),
        (y0 + 1, x0 + 1, ly * lx),
    ):
        inside = (cy >= 0) & (cy < height) & (cx >= 0) & (cx < width)
        index = (cy.clamp(0, height - 1) * width + cx.clamp(0, width - 1)).long()
        index = index.reshape(batch, dg, 1, points).expand(-1, -1, channels // dg, -1)
        corner = torch.gather(planes, 3, index)  # (N, dg, C/dg, points)
        value = value + corner * (weight * inside).reshape(batch, dg, 1, points)
    if geo.modulated:
        mask = offset[:, 2 * dg * taps :].reshape(batch, dg, 1, points)
        value = value * mask
    value = value.reshape(batch, channels, geo.kh, geo.kw, geo.out_h, geo.out_w)
    return value.permute(0, 1, 4, 2, 5, 3).reshape(
        batch, channels, geo.out_h * geo.kh, geo.out_w * geo.kw
    )


def _forward(
    input: torch.Tensor,
    weight: torch.Tensor,
    offset: torch.Tensor,  # noqa: A002
    bias: Optional[torch.Tensor],
    geo: _Geometry,
) -> Tuple[torch.Tensor, torch.Tensor]:
    sampled = _sampled(_precision.upcast(input).float(), _precision.upcast(offset).float(), geo)
    out = F.conv2d(
        sampled,
        _precision.upcast(weight).float(),
        None if bias is None else _precision.upcast(bias).float(),
        stride=(geo.kh, geo.kw),
        groups=geo.groups,
    )
    return out, sampled


class _DeformableConv2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, offset, bias, args):  # noqa: A002,D102
        geo = _Geometry("npu_deformable_conv2d", input, weight, offset, *args)
        with torch.no_grad():
            out, sampled = _forward(input, weight, offset, bias, geo)
        ctx.geo = geo
        ctx.bias_dtype = None if bias is None else bias.dtype
        ctx.save_for_backward(input, weight, offset)
        dtype = input.dtype
        return _precision.store(out, dtype), _precision.store(sampled, dtype)

    @staticmethod
    def backward(ctx, grad_out, _grad_sampled):  # noqa: D102
        input, weight, offset = ctx.saved_tensors
        grad_input, grad_weight, grad_offset, grad_bias = _gradients(
            input, grad_out, weight, offset, ctx.bias_dtype or weight.dtype, ctx.geo
        )
        return (
            grad_input,
            grad_weight,
            grad_offset,
            grad_bias if ctx.bias_dtype is not None else None,
            None,
        )


def _gradients(
    input: torch.Tensor,
    grad_out: torch.Tensor,
    weight: torch.Tensor,  # noqa: A002
    offset: torch.Tensor,
    bias_dtype: torch.dtype,
    geo: _Geometry,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(grad_input, grad_weight, grad_offset, grad_bias), each in its tensor's dtype."""
    leaves = [
        _precision.upcast(t).detach().float().requires_grad_() for t in (input, weight, offset)
    ]
    with torch.enable_grad():
        out, _ = _forward(leaves[0], leaves[1], leaves[2], None, geo)
        found = torch.autograd.grad(out, leaves, _precision.upcast(grad_out).float())
    grad_bias = _precision.upcast(grad_out).float().sum((0, 2, 3))
    dtypes: List[torch.dtype] = [input.dtype, weight.dtype, offset.dtype, bias_dtype]
    return tuple(
        _precision.store(g, dtype)  # type: ignore[return-value]
        for g, dtype in zip(list(found) + [grad_bias], dtypes)
    )


@operator
def npu_deformable_conv2d(
    input: torch.Tensor,
    weight: torch.Tensor,  # noqa: A002
    offset: torch.Tensor,
    bias: Optional[torch.Tensor],
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int] = (1, 1, 1, 1),
    groups: int = 1,
    deformable_groups: int = 1,
    modulated: bool = True,
) -> Tuple[torch.Tensor, torch.Tensor]:
    args = (
        list(kernel_size),
        list(stride),
        list(padding),
        list(dilation),
        groups,
        deformable_groups,
        modulated,
    )
    return _DeformableConv2d.apply(input, weight, offset, bias, args)


@operator
def npu_deformable_conv2dbk(
    input: torch.Tensor,
    grad_output: torch.Tensor,  # noqa: A002
    offset_out: torch.Tensor,
    weight: torch.Tensor,
    offset: torch.Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int] = (1, 1, 1, 1),
    groups: int = 1,
    deformable_groups: int = 1,
    modulated: bool = True,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    op = "npu_deformable_conv2dbk"
    geo = _Geometry(
        op,
        input,
        weight,
        offset,
        kernel_size,
        stride,
        padding,
        dilation,
        groups,
        deformable_groups,
        modulated,
    )
    batch, channels = input.shape[:2]
    want_out = (batch, weight.size(0), geo.out_h, geo.out_w)
    want_sampled = (batch, channels, geo.out_h * geo.kh, geo.out_w * geo.kw)
    if tuple(grad_output.shape) != want_out or tuple(offset_out.shape) != want_sampled:
        raise RuntimeError(
            f"{op}: grad_output must have shape {want_out} and offset_out "
            f"{want_sampled}, got {tuple(grad_output.shape)} and "
            f"{tuple(offset_out.shape)}"
        )
    # offset_out is what the forward sampled; the gradients are recomputed from input and offset,
    # which give it again.
    return _gradients(input, grad_output, weight, offset, weight.dtype, geo)
