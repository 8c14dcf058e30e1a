"""``torch_npu.npu_ps_roi_pooling`` and ``npu_ps_roi_pooling_backward``: position-sensitive RoI
pooling (R-FCN), as Ascend's R-FCN port pools its class and box score maps.

``rois`` is ``(B, 5, R)``: for each of ``B`` images ``R`` rois ``(batch index, x1, y1, x2, y2)``;
the output is ``(B * R, output_dim, group_size, group_size)``, image by image. As torch_npu's
own test computes it (R-FCN's Caffe layer): the roi runs from ``round(x1) * scale`` to
``round(x2 + 1) * scale`` (rounding half to even), at least 0.1 wide and high; bin ``(ph, pw)``
covers rows ``[trunc(ph * h + y0), ceil((ph + 1) * h + y0))`` and columns ``[floor(pw * w + x0),
ceil((pw + 1) * w + x0))``, clipped to the map, and averages channel ``(ctop * group_size + ph)
* group_size + pw`` there; an empty bin gives 0, and so does a batch index outside the batch.
fp16 is computed in fp32 and stored once. The gradient (torch_npu's derivative) spreads each
output gradient evenly over its bin; ``npu_ps_roi_pooling_backward`` gives it for an input of
``(rois.size(0), output_dim * group_size ** 2, *input_size)``, as op-plugin sizes it.

Bin sums come from a summed-area table in float64 (four reads per bin), the gradient from the
matching difference table, so neither depends on the bins' size.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence, Tuple

import torch

from . import _precision
from ._registry import operator


class _Bins(NamedTuple):
    """Where each output bin reads: the image (K, 1, 1, 1; clamped into the batch), the input
    channel (1, D, G, G), the four (sign, row, column) corners of the summed-area table, the
    bin's pixel count (K, 1, G, G) and whether it counts (non-empty, image in the batch)."""

    images: torch.Tensor
    channel: torch.Tensor
    corners: Sequence[Tuple[float, torch.Tensor, torch.Tensor]]
    area: torch.Tensor
    keep: torch.Tensor


def _check(op: str, rois: torch.Tensor, group_size: int, output_dim: int, channels: int) -> None:
    if rois.dim() != 3 or rois.size(1) != 5:
        raise RuntimeError(
            f"{op}: rois must be (B, 5, R): (batch index, x1, y1, x2, y2) of R "
            f"rois per image, got shape {tuple(rois.shape)}"
        )
    if group_size < 1 or output_dim < 1:
        raise RuntimeError(
            f"{op}: group_size and output_dim must be positive, got {group_size} and {output_dim}"
        )
    if channels != output_dim * group_size * group_size:
        raise RuntimeError(
            f"{op}: the features need output_dim * group_size ** 2 = "
            f"{output_dim * group_size * group_size} channels, got {channels}"
        )


def _bins(
    rois: torch.Tensor,
    scale: float,
    group: int,
    output_dim: int,
    batch: int,
    height: int,
    width: int,
) -> _Bins:
    r = _precision.upcast(rois).float().transpose(1, 2).reshape(-1, 5)
    index = r[:, 0].trunc().long()
    start_w, start_h = torch.round(r[:, 1]) * scale, torch.round(r[:, 2]) * scale
    end_w, end_h = torch.round(r[:, 3] + 1.0) * scale, torch.round(r[:, 4] + 1.0) * scale
    bin_w = (end_w - start_w).clamp(min=0.1) / group
    bin_h = (end_h - start_h).clamp(min=0.1) / group
    steps = torch.arange(group, dtype=torch.float32, device=r.device)
    rows0 = (steps * bin_h[:, None] + start_h[:, None]).trunc().clamp(0, height).long()
    rows1 = torch.ceil((steps + 1) * bin_h[:, None] + start_h[:, None]).clamp(0, height).long()
    cols0 = torch.floor(steps * bin_w[:, None] + start_w[:, None]).clamp(0, width).long()
    cols1 = torch.ceil((steps + 1) * bin_w[:, None] + start_w[:, None]).clamp(0, width).long()
    empty = (rows1 <= rows0)[:, :, None] | (cols1 <= cols0)[:, None, :]
    inside = (index >= 0) & (index < batch)
    r0, r1 = rows0[:, None, :, None], rows1[:, None, :, None]
    c0, c1 = cols0[:, None, None, :], cols1[:, None, None, :]
    channel = torch.arange(output_dim * group * group, device=r.device)
    return _Bins(
        images=index.clamp(0, batch - 1)[:, None, None, None],
        channel=channel.view(1, output_dim, group, group),
        corners=((1.0, r1, c1), (-1.0, r0, c1), (-1.0, r1, c0), (1.0, r0, c0)),
        area=((r1 - r0) * (c1 - c0)).double(),
        keep=~empty[:, None] & inside[:, None, None, None],
    )


def _pool(
    features: torch.Tensor, rois: torch.Tensor, scale: float, group: int, output_dim: int
) -> torch.Tensor:
    batch, _, height, width = features.shape
    table = torch.zeros(
        (batch, features.size(1), height + 1, width + 1),
        dtype=torch.float64,
        device=features.device,
    )
    table[:, :, 1:, 1:] = _precision.upcast(features).double().cumsum(2).cumsum(3)
    bins = _bins(rois, scale, group, output_dim, batch, height, width)
    total = 0
    for sign, row, col in bins.corners:
        total = total + sign * table[bins.images, bins.channel, row, col]
    out = torch.where(bins.keep, total / bins.area.clamp(min=1), torch.zeros_like(total))
    return _precision.store(out.float(), features.dtype)


def _spread(
    grad: torch.Tensor,
    rois: torch.Tensor,
    scale: float,
    group: int,
    output_dim: int,
    input_size: Sequence[int],
) -> torch.Tensor:
    height, width = int(input_size[0]), int(input_size[1])
    batch = rois.size(0)
    bins = _bins(rois, scale, group, output_dim, batch, height, width)
    share = torch.where(
        bins.keep,
        _precision.upcast(grad).double() / bins.area.clamp(min=1),
        torch.zeros_like(bins.area),
    )
    diff = torch.zeros(
        (batch, output_dim * group * group, height + 1, width + 1),
        dtype=torch.float64,
        device=grad.device,
    )
    for sign, row, col in bins.corners:
        target = (bins.images, bins.channel, row, col)
        shape = torch.broadcast_shapes(*(t.shape for t in target), share.shape)
        diff.index_put_(
            tuple(t.expand(shape) for t in target), (sign * share).expand(shape), accumulate=True
        )
    out = diff.cumsum(2).cumsum(3)[:, :, :height, :width]
    return _precision.store(out.float(), grad.dtype)


class _PsRoiPooling(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, rois, scale, group, output_dim):  # noqa: D102
        ctx.save_for_backward(rois)
        ctx.args = (scale, group, output_dim, tuple(features.shape[2:]))
        return _pool(features, rois, scale, group, output_dim)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        (rois,) = ctx.saved_tensors
        scale, group, output_dim, size = ctx.args
        return (
            npu_ps_roi_pooling_backward(grad, rois, scale, group, output_dim, size),
            None,
            None,
            None,
            None,
        )


@operator
def npu_ps_roi_pooling(
    input: torch.Tensor, rois: torch.Tensor, spatial_scale: float, group_size: int, output_dim: int
) -> torch.Tensor:
    if input.dim() != 4:
        raise RuntimeError(
            f"npu_ps_roi_pooling: the features must be NCHW (4-D), got shape {tuple(input.shape)}"
        )
    _check("npu_ps_roi_pooling", rois, group_size, output_dim, input.size(1))
    return _PsRoiPooling.apply(input, rois, float(spatial_scale), int(group_size), int(output_dim))


@operator
def npu_ps_roi_pooling_backward(
    output_grad: torch.Tensor,
    rois: torch.Tensor,
    spatial_scale: float,
    group_size: int,
    output_dim: int,
    input_size: Sequence[int],
) -> torch.Tensor:
    op = "npu_ps_roi_pooling_backward"
    _check(op, rois, group_size, output_dim, output_dim * group_size * group_size)
    if len(input_size) < 2:
        raise RuntimeError(f"{op}: input_size must give (H, W), got {list(input_size)}")
    want = (rois.size(0) * rois.size(2), output_dim, group_size, group_size)
    if tuple(output_grad.shape) != want:
        raise RuntimeError(
            f"{op}: output_grad must have shape {want}, got {tuple(output_grad.shape)}"
        )
    return _spread(
        output_grad, rois, float(spatial_scale), int(group_size), int(output_dim), input_size[:2]
    )
