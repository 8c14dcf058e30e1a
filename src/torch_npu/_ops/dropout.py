"""The bit-mask dropout of torch_npu: ``_npu_dropout(input, p) -> (result, mask)`` (also as
``npu_dropout``), and its parts ``npu_dropout_gen_mask(size, p, *, dtype, layout, device,
pin_memory)``, ``npu_dropout_do_mask(input, mask, p) -> (result, mask)`` and
``npu_dropout_backward(grad_output, mask, p)``.

``p`` is the probability of dropping an element; kept elements are scaled by ``1 / (1 - p)``.
The mask is uint8 with one bit per element (see ``_dropout_masks``). The gradient of ``result`` is
``grad * mask / (1 - p)``, as ``npu_dropout_backward`` computes.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import torch

from .. import _dropout_masks
from ._precision import store, upcast
from ._registry import operator


def _check_p(p: float, what: str) -> float:
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"{what}: dropout probability has to be between 0 and 1, but got {p}")
    return p


@operator
def npu_dropout_gen_mask(
    size: Sequence[int],
    p: float,
    *,
    dtype: Optional[torch.dtype] = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Optional[bool] = None,
) -> torch.Tensor:
    """A bit mask for ``size`` elements, each kept with probability ``1 - p``: uint8 of
    ``ceil(numel / 128) * 16`` bytes."""
    p = _check_p(p, "npu_dropout_gen_mask")
    count = _dropout_masks.aligned(_dropout_masks.numel_of(size))
    return _dropout_masks.pack_bits(_dropout_masks.keep_draws(count, p, device))


def _apply_bits(values: torch.Tensor, mask: torch.Tensor, p: float) -> torch.Tensor:
    bits = _dropout_masks.unpack_bits(mask, values.numel()).reshape(values.shape)
    return values * (bits * _dropout_masks.keep_scale(p))


@operator
def npu_dropout_do_mask(
    input: torch.Tensor, mask: torch.Tensor, p: float
) -> Tuple[torch.Tensor, torch.Tensor]:
    """``input`` with the elements ``mask`` drops zeroed and the others scaled by 1/(1-p)."""
    p = _check_p(p, "npu_dropout_do_mask")
    return store(_apply_bits(upcast(input), mask, p), input.dtype), mask


@operator
def npu_dropout_backward(grad_output: torch.Tensor, mask: torch.Tensor, p: float) -> torch.Tensor:
    if not grad_output.is_floating_point():
        raise RuntimeError("dropoutbackward only supports floating-point dtypes")
    p = _check_p(p, "npu_dropout_backward")
    return store(_apply_bits(upcast(grad_output), mask, p), grad_output.dtype)


@operator(aliases=("npu_dropout",))
def _npu_dropout(input: torch.Tensor, p: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """Dropout of ``input`` with a fresh bit mask: (result, mask)."""
    p = _check_p(p, "_npu_dropout")
    if not input.is_floating_point():
        raise RuntimeError("dropout only supports floating-point dtypes")
    mask = npu_dropout_gen_mask(input.shape, p, device=input.device)
    return npu_dropout_do_mask(input, mask, p)


npu_dropout = _npu_dropout
