"""torch_npu's memory placement calls, on the emulated NPU whose memory is the host's:

- ``npu_prefetch(input, dependency, max_size, offset=0)``: a hint that loads up to ``max_size``
  bytes of ``input`` from ``offset`` into the NPU's L2 cache before later kernels read them. It
  changes no value on the NPU either, so here it checks its arguments as documented
  (``max_size > 0``, ``0 <= offset`` within the tensor) and returns None;
- ``empty_with_swapped_memory(size, dtype=None, device=None)``: an uninitialised NPU tensor
  whose memory is host memory mapped for the device: on the emulator every NPU tensor's memory
  is the host's, so it is an ordinary (uninitialised) NPU tensor.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from .._device import device_args
from ._registry import operator


@operator
def npu_prefetch(
    input: torch.Tensor, dependency: Optional[torch.Tensor], max_size: int, offset: int = 0
) -> None:
    if input is None:
        raise RuntimeError("npu_prefetch: input must not be None")
    if int(max_size) <= 0:
        raise RuntimeError(f"npu_prefetch: max_size must be greater than 0, got {max_size}")
    nbytes = input.numel() * input.element_size()
    if not 0 <= int(offset) < max(nbytes, 1):
        raise RuntimeError(
            f"npu_prefetch: offset {offset} must lie within the tensor's {nbytes} bytes"
        )
    return None


@operator
def empty_with_swapped_memory(
    size: Sequence[int], *, dtype: Optional[torch.dtype] = None, device: Any = None
) -> torch.Tensor:
    size = (size,) if isinstance(size, int) else tuple(size)
    npu = device_args.npu_named(
        device if device is not None else "npu", "torch_npu.empty_with_swapped_memory"
    )
    if npu is None:
        raise RuntimeError(
            f"torch_npu.empty_with_swapped_memory: the device must be an NPU, got {device}"
        )
    return torch.empty(size, dtype=dtype, device=f"npu:{npu}")
