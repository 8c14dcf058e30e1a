"""``torch_npu.npu_roi_align`` and its gradient ``npu_roi_alignbk``: RoIAlign (Mask R-CNN) of
NCHW features over ``(K, 5)`` rois ``(batch index, x1, y1, x2, y2)``, as Ascend's Faster/Mask
R-CNN, Cascade R-CNN, RetinaMask and GCNet ports call them from their own autograd Functions.

Semantics of the NPU's ``ROIAlign``/``ROIAlignGrad`` (their reference implementations in CANN):
the roi is scaled by ``spatial_scale``; ``roi_end_mode`` 1 moves its end by one input pixel
(``(x2 + 1) * scale``), 2 and 3 shift both ends by -0.5 (torchvision's and mmcv's
``aligned=True``), 0 leaves it (``aligned=False``); in modes 0 and 1 a roi is at least one pixel
wide and high. Each of the ``pooled_height x pooled_width`` bins averages a ``sample_num`` squared
grid of bilinear samples (``sample_num <= 0``: ``ceil(bin size)`` per side, per roi); a sample
beyond one pixel outside the map counts as 0, one within it is clamped to the edge. A roi whose
batch index is outside the batch gives zeros. fp16 inputs are computed in fp32 and the result
stored as fp16, as op-plugin casts around the kernel. ``npu_roi_alignbk`` spreads each output
gradient back onto the samples' four pixels with the same weights; its ``roi_end_mode``
defaults to the kernel's 1 (the scripts above pass none, whatever mode their forward used).
Neither has a derivative in torch_npu; a backward through them raises.

Sampling is separable: a bin's value is ``Wy @ feature @ Wx^T`` with per-roi row and column
weights (made for a chunk of rois at once), so each direction is two matrix products per roi over
the window of pixels its samples touch, whatever the map's size.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Sequence, Tuple

import torch

from . import _precision
from ._no_derivative import without_derivative
from ._registry import operator

_MODES = (0, 1, 2, 3)
_ROIS_PER_CHUNK = 64


@operator
def npu_roi_align(
    input: torch.Tensor,
    rois: torch.Tensor,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
    sample_num: int,
    roi_end_mode: int,
) -> torch.Tensor:
    if input.dim() != 4:
        raise RuntimeError(
            f"npu_roi_align: features must be NCHW (4-D), got shape {tuple(input.shape)}"
        )
    _check("npu_roi_align", input.shape, rois, pooled_height, pooled_width, roi_end_mode)

    def compute(feats: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
        return _forward(
            feats,
            boxes,
            float(spatial_scale),
            pooled_height,
            pooled_width,
            sample_num,
            roi_end_mode,
        )

    return without_derivative("npu_roi_align", compute, input, rois)


@operator
def npu_roi_alignbk(
    input: torch.Tensor,
    rois: torch.Tensor,
    xdiff_shape: Sequence[int],
    pooled_width: int,
    pooled_height: int,
    spatial_scale: float,
    sample_num: int,
    roi_end_mode: Optional[int] = None,
) -> torch.Tensor:
    mode = 1 if roi_end_mode is None else roi_end_mode
    shape = tuple(int(v) for v in xdiff_shape)
    if len(shape) != 4:
        raise RuntimeError(f"npu_roi_alignbk: xdiff_shape must be (N, C, H, W), got {shape}")
    _check("npu_roi_alignbk", shape, rois, pooled_height, pooled_width, mode)
    want = (rois.size(0), shape[1], pooled_height, pooled_width)
    if tuple(input.shape) != want:
        raise RuntimeError(
            f"npu_roi_alignbk: the gradient must have shape (rois, C, "
            f"pooled_height, pooled_width) = {want}, got {tuple(input.shape)}"
        )

    def compute(grads: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
        return _backward(
            grads, boxes, shape, float(spatial_scale), pooled_height, pooled_width, sample_num, mode
        )

    return without_derivative("npu_roi_alignbk", compute, input, rois)


def _check(
    op: str,
    feature_shape: Sequence[int],
    rois: torch.Tensor,
    pooled_height: int,
    pooled_width: int,
    mode: int,
) -> None:
    if rois.dim() != 2 or rois.size(1) != 5:
        raise RuntimeError(
            f"{op}: rois must be (K, 5) rows (batch index, x1, y1, x2, y2), got "
            f"shape {tuple(rois.shape)}"
        )
    if pooled_height < 1 or pooled_width < 1:
        raise RuntimeError(
            f"{op}: pooled_height and pooled_width must be positive, got "
            f"{pooled_height} and {pooled_width}"
        )
    if mode not in _MODES:
        raise RuntimeError(f"{op}: roi_end_mode must be 0, 1, 2 or 3, got {mode}")
    if feature_shape[2] < 1 or feature_shape[3] < 1:
        raise RuntimeError(
            f"{op}: the feature map must not be empty, got shape {tuple(feature_shape)}"
        )


def _forward(
    features: torch.Tensor,
    rois: torch.Tensor,
    scale: float,
    pooled_h: int,
    pooled_w: int,
    sample_num: int,
    mode: int,
) -> torch.Tensor:
    feats = _precision.upcast(features)
    out = feats.new_zeros((rois.size(0), feats.size(1), pooled_h, pooled_w))
    for roi, image, rows, cols, ys, xs in _windows(
        rois, scale, pooled_h, pooled_w, sample_num, mode, feats.shape, feats.dtype
    ):
        # (PH, h) @ (C, h, w) @ (w, PW) over the pixels the roi's samples touch
        out[roi] = torch.matmul(torch.matmul(rows, feats[image, :, ys, xs]), cols.t())
    return _precision.store(out, features.dtype)


def _backward(
    grad: torch.Tensor,
    rois: torch.Tensor,
    shape: Tuple[int, int, int, int],
    scale: float,
    pooled_h: int,
    pooled_w: int,
    sample_num: int,
    mode: int,
) -> torch.Tensor:
    grads = _precision.upcast(grad)
    out = grads.new_zeros(shape)
    for roi, image, rows, cols, ys, xs in _windows(
        rois, scale, pooled_h, pooled_w, sample_num, mode, shape, grads.dtype
    ):
        # (h, PH) @ (C, PH, PW) @ (PW, w), added onto the pixels the samples took
        out[image, :, ys, xs] += torch.matmul(torch.matmul(rows.t(), grads[roi]), cols)
    return _precision.store(out, grad.dtype)


def _windows(
    rois: torch.Tensor,
    scale: float,
    pooled_h: int,
    pooled_w: int,
    sample_num: int,
    mode: int,
    shape: Sequence[int],
    dtype: torch.dtype,
) -> Iterator[Tuple[int, int, torch.Tensor, torch.Tensor, slice, slice]]:
    """(roi, image, row weights (PH, h), column weights (PW, w), rows, columns) of each roi
    whose samples weigh on pixels of an image in the batch (the others give zeros): the weights
    over the window of the map its samples touch. Weights are made a chunk of rois at a time."""
    batch, _, height, width = shape
    for first in range(0, rois.size(0), _ROIS_PER_CHUNK):
        index, rows, cols = _weights(
            rois[first : first + _ROIS_PER_CHUNK],
            scale,
            pooled_h,
            pooled_w,
            sample_num,
            mode,
            height,
            width,
            dtype,
        )
        for k, (image, ys, xs) in enumerate(zip(index.tolist(), _span(rows), _span(cols))):
            if 0 <= image < batch and ys is not None and xs is not None:
                yield (
                    first + k,
                    image,
                    rows[k, :, ys[0] : ys[1]],
                    cols[k, :, xs[0] : xs[1]],
                    slice(*ys),
                    slice(*xs),
                )


def _span(weights: torch.Tensor) -> List[Optional[Tuple[int, int]]]:
    """Per roi, [first, last + 1) of the pixels its (k, pooled, extent) weights touch, or None."""
    touched = weights.ne(0).any(1)  # (k, extent)
    extent = touched.size(1)
    first = touched.float().argmax(1).tolist()
    last = (extent - 1 - touched.flip(1).float().argmax(1)).tolist()
    return [
        (f, end + 1) if any_ else None for f, end, any_ in zip(first, last, touched.any(1).tolist())
    ]


def _weights(
    rois: torch.Tensor,
    scale: float,
    pooled_h: int,
    pooled_w: int,
    sample_num: int,
    mode: int,
    height: int,
    width: int,
    dtype: torch.dtype,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(batch index, row weights (k, PH, H), column weights (k, PW, W)) of the rois ``rois``,
    the bin averages' ``1 / count`` folded into the row weights."""
    boxes = _precision.upcast(rois).float()
    index = boxes[:, 0].trunc().long()
    start_x, start_y = boxes[:, 1] * scale, boxes[:, 2] * scale
    end_x, end_y = boxes[:, 3] * scale, boxes[:, 4] * scale
    if mode == 1:
        end_x, end_y = end_x + scale, end_y + scale
    elif mode >= 2:
        start_x, start_y, end_x, end_y = start_x - 0.5, start_y - 0.5, end_x - 0.5, end_y - 0.5
    size_x, size_y = end_x - start_x, end_y - start_y
    if mode < 2:
        size_x, size_y = size_x.clamp(min=1.0), size_y.clamp(min=1.0)
    bin_x, bin_y = size_x / pooled_w, size_y / pooled_h
    if sample_num > 0:
        grid_x = torch.full_like(bin_x, float(sample_num))
        grid_y = torch.full_like(bin_y, float(sample_num))
    else:
        grid_x, grid_y = torch.ceil(bin_x), torch.ceil(bin_y)
    count = (grid_x * grid_y).clamp(min=1.0)
    rows = _axis_weights(start_y, bin_y, grid_y, pooled_h, height) / count.view(-1, 1, 1)
    cols = _axis_weights(start_x, bin_x, grid_x, pooled_w, width)
    return index, rows.to(dtype), cols.to(dtype)


def _axis_weights(
    start: torch.Tensor, bin_size: torch.Tensor, grid: torch.Tensor, pooled: int, extent: int
) -> torch.Tensor:
    """(k, pooled, extent): the summed bilinear weights one axis's samples of each bin put on
    each pixel of that axis (samples beyond one pixel outside the map weigh nothing)."""
    k = start.size(0)
    most = int(grid.max().item()) if k else 0
    if most == 0:
        return start.new_zeros((k, pooled, extent))
    bins = torch.arange(pooled, dtype=start.dtype, device=start.device).view(1, -1, 1)
    steps = torch.arange(most, dtype=start.dtype, device=start.device).view(1, 1, -1)
    g = grid.view(-1, 1, 1)
    b = bin_size.view(-1, 1, 1)
    # A roi with no samples on this axis (an empty aligned roi) divides by 1, and weighs nothing.
    pos = start.view(-1, 1, 1) + bins * b + (steps + 0.5) * b / g.clamp(min=1.0)
    used = (steps < g) & (pos >= -1.0) & (pos <= extent)  # (k, pooled, most)
    pos = torch.where(used, pos, torch.zeros_like(pos)).clamp(min=0.0)
    low = pos.floor()
    at_edge = low >= extent - 1
    low = torch.where(at_edge, torch.full_like(low, extent - 1), low)
    pos = torch.where(at_edge, low, pos)
    high = torch.where(at_edge, low, low + 1)
    frac = pos - low
    weights = start.new_zeros((k, pooled, extent))
    zero = torch.zeros_like(frac)
    weights.scatter_add_(2, low.long(), torch.where(used, 1.0 - frac, zero))
    weights.scatter_add_(2, high.long(), torch.where(used, frac, zero))
    return weights
