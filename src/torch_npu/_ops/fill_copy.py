"""torch_npu's in-place fills: ``one_(input)`` fills ``input`` with ones and returns it;
``copy_memory_(dst, src, non_blocking=False)`` copies ``src``'s elements into ``dst`` and
returns ``dst`` (``non_blocking`` changes nothing on the host)."""

from __future__ import annotations

import torch

from ._registry import operator


@operator
def one_(input: torch.Tensor) -> torch.Tensor:
    return input.fill_(1)


@operator
def copy_memory_(dst: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    if dst.numel() != src.numel():
        raise RuntimeError(f"copy_memory_: dst has {dst.numel()} elements, src {src.numel()}")
    return dst.copy_(src.reshape(dst.shape))
