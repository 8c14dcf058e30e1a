"""The memory formats an NPU tensor takes: contiguous only.

torch_npu lays NPU tensors out in its own formats (``npu_format_cast``), never in torch's
``channels_last``: it refuses to make an NPU tensor in any memory format but the contiguous one
(``torch.empty(..., device="npu", memory_format=torch.channels_last)``), to copy one into another
(``npu_tensor.to(memory_format=torch.channels_last)``; torch_npu 2.x refuses every format but
the contiguous and the preserving one there), and to make it contiguous in another
(``npu_tensor.contiguous(memory_format=torch.channels_last)``, unless it already is), each with
the NPU's "feature not supported" error code, which scripts match. Where torch_npu makes a tensor
like another (``empty_like``, ``zeros_like``, ...) in a format it does not keep, it makes it
contiguous instead, without an error.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from . import torch_device

_KEPT = (None, torch.contiguous_format, torch.preserve_format)
_CHANNELS_LAST = (torch.channels_last, torch.channels_last_3d)


def _refusal(message: str) -> RuntimeError:
    from ..utils._error_code import ErrCode, ops_error  # (torch_npu.utils imports the makers)

    return RuntimeError(message + ops_error(ErrCode.NOT_SUPPORT))


def check_new(memory_format: Optional[torch.memory_format]) -> None:
    """A new NPU tensor (torch.empty and its kind) in ``memory_format``."""
    if memory_format is not None and memory_format != torch.contiguous_format:
        raise _refusal("Only c10::MemoryFormat::Contiguous is supported for creating a npu tensor")


def check_copy(memory_format: Optional[torch.memory_format]) -> None:
    """A copy of an NPU tensor (``to``) into ``memory_format``."""
    if torch_device.NATIVE:
        if memory_format not in _KEPT:
            raise _refusal("Only contiguous_format or preserve_format is supported.")
    elif memory_format in _CHANNELS_LAST:
        raise _refusal("NPU not support specify memory_format.")


def check_contiguous(tensor: torch.Tensor, memory_format: torch.memory_format) -> None:
    """``tensor.contiguous(memory_format=...)`` of an NPU tensor."""
    if memory_format == torch.contiguous_format or _is_contiguous(tensor, memory_format):
        return
    word = "supported" if torch_device.NATIVE else "supportted"  # sic, torch_npu 1.x's
    raise _refusal(f"NPU contiguous operator only {word} contiguous memory format.")


def _is_contiguous(tensor: torch.Tensor, memory_format: torch.memory_format) -> bool:
    if memory_format == torch.preserve_format:
        return tensor.is_contiguous()
    if memory_format in _CHANNELS_LAST and tensor.dim() != (
        4 if memory_format == torch.channels_last else 5
    ):
        return False
    return tensor.is_contiguous(memory_format=memory_format)


def kept_like(memory_format: Any) -> bool:
    """Whether an NPU tensor made like another keeps ``memory_format`` (else it is contiguous)."""
    return memory_format in _KEPT
