"""Tensors of any dtype through collectives that carry only int8, int32, float16 and float32.

Every HCCL carries those four (``CARRIED``): the CANN of Ascend's first PyTorch releases carried
only them, and current ones reduce and move more on Ascend 910. A broadcast or gather that only
moves bits can move any tensor as a view of the same bytes in one of them: 8-byte elements as
pairs of int32, 2-byte ones as float16 bit patterns, 1-byte ones as int8. Arithmetic
(all-reduce) cannot.
"""

from __future__ import annotations

import torch

# Written here because Huawei's torch_npu has no public name for HCCL's rules (apex may use only
# torch_npu's public API); tests/python/test_emulator_hccl.py checks that the emulator's hccl
# lets these through in every collective.
CARRIED = (torch.int8, torch.int32, torch.float16, torch.float32)
_BY_SIZE = {1: torch.int8, 2: torch.float16, 4: torch.int32, 8: torch.int32}


def bits_view(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` itself when its dtype is carried, else a view of its bytes in one that is (it
    must be contiguous). Writing the view writes the tensor."""
    if tensor.dtype in CARRIED:
        return tensor
    if not tensor.is_contiguous():
        raise ValueError(f"cannot move a non-contiguous {tensor.dtype} tensor through HCCL")
    return tensor.reshape(-1).view(_BY_SIZE[tensor.element_size()])
