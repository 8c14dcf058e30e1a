"""Which tensors the runtime's one-pass kernels (``half_kernels``, ``bf16_kernels``) read: they
take raw addresses and element counts, so a tensor must be host memory of the expected dtype,
and, read as one flat range, contiguous; an output may only be an input itself or lie apart
from it. Also whether a scaling argument (``alpha``, ``beta``) scales nothing, which the kernels
that run an op as torch's unscaled form (these and ``bf16_torch_kernels``, ``bf16_gemms``) ask."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

import torch

_is_cpu = torch._C._TensorBase.is_cpu.__get__
_TO_COPY_KWARGS = frozenset({"dtype", "layout", "device"})


def strided(x: Any, dtype: torch.dtype) -> bool:
    """A non-empty strided host tensor of ``dtype``, laid out in any way."""
    return (
        isinstance(x, torch.Tensor)
        and x.dtype == dtype
        and x.layout == torch.strided
        and _is_cpu(x)
        and x.numel() > 0
    )


def plain(x: Any, dtype: torch.dtype) -> bool:
    """A contiguous, non-empty host tensor of ``dtype``, read as one flat range."""
    return strided(x, dtype) and x.is_contiguous()


def is_one(value: Any) -> bool:
    """A Python number equal to 1: an ``alpha`` or ``beta`` that scales nothing."""
    return type(value) in (int, float) and value == 1


def same_or_apart(a: torch.Tensor, b: torch.Tensor) -> bool:
    """``a`` and ``b`` (contiguous, one element size) are the same memory or do not overlap."""
    pa, pb = a.data_ptr(), b.data_ptr()
    if pa == pb:
        return a.numel() == b.numel()
    size = a.element_size()
    return pa + a.numel() * size <= pb or pb + b.numel() * size <= pa


def dtype_change(
    args: Sequence[Any], kwargs: Dict[str, Any]
) -> Optional[Tuple[torch.Tensor, torch.dtype]]:
    """(tensor, new dtype) of an ``aten._to_copy`` that only changes the dtype of a host tensor,
    also as autograd asks for it (``.float()``'s backward names the layout and the host device,
    where the NPU's tensors live to torch); None for any other copy."""
    if (
        len(args) != 1
        or "dtype" not in kwargs
        or not _TO_COPY_KWARGS.issuperset(kwargs)
        or kwargs.get("layout") not in (None, torch.strided)
    ):
        return None
    device = kwargs.get("device")
    if device is not None and torch.device(device).type != "cpu":
        return None
    if not isinstance(args[0], torch.Tensor):
        return None
    return args[0], kwargs["dtype"]
