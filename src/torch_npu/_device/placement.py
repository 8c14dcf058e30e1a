"""Which emulated NPU a tensor is on.

Every emulated NPU is backed by the CPU, so torch itself sees CPU tensors. What makes one an NPU
tensor (``is_npu``, ``device`` ``npu:N``, ``type()`` ``torch.npu.FloatTensor``) is a mark on the
tensor object: the NPU index, kept in the tensor's ``__dict__``. Marks are set where a tensor is
put on an NPU (``npu()``, ``to("npu:N")``, a factory with ``device="npu"``, ``torch.load`` with
an NPU ``map_location``) and follow torch's operations through the emulation's dispatch mode: an
operation's new outputs are on the NPU its inputs are on.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

import torch

_MARK = "_apexnpu_npu"


def npu_of(tensor: Any) -> Optional[int]:
    """The NPU index ``tensor`` is on, or None for a host (CPU) tensor."""
    return getattr(tensor, _MARK, None)


def put(tensor: torch.Tensor, index: Optional[int]) -> torch.Tensor:
    """Mark ``tensor`` as on NPU ``index`` (None: the host); returns it."""
    if index is None:
        if getattr(tensor, _MARK, None) is not None:
            delattr(tensor, _MARK)
    else:
        setattr(tensor, _MARK, index)
    return tensor


def put_all(tensors: Iterable[Any], index: Optional[int]) -> None:
    for t in tensors:
        if isinstance(t, torch.Tensor):
            put(t, index)


class DeviceMismatch(RuntimeError):
    pass


# Operations that move data between devices, so their tensors may sit on different NPUs.
CROSS_DEVICE_OPS = frozenset({"aten::copy_", "aten::_copy_from", "aten::_copy_from_and_resize",
                              "aten::copy"})


def common_npu(leaves: Iterable[Any], op: Any) -> Optional[int]:
    """The NPU the tensors among ``leaves`` (the arguments of the aten operation ``op``) are on;
    None when all are host tensors. Tensors on two different NPUs are an error, as on the NPU,
    except for copies between devices."""
    found: Optional[int] = None
    for x in leaves:
        index = getattr(x, _MARK, None) if isinstance(x, torch.Tensor) else None
        if index is None or index == found:
            continue
        if found is None:
            found = index
            continue
        op_name = op._schema.name
        if op_name not in CROSS_DEVICE_OPS:
            raise DeviceMismatch(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"npu:{found} and npu:{index}! (in {op_name} on the emulated NPU)")
    return found


def put_outputs(outputs: Iterable[Any], inputs: Iterable[Any], index: int) -> None:
    """Mark the new tensors among ``outputs`` (not the inputs an in-place op returns) as on NPU
    ``index``."""
    given = {id(x) for x in inputs if isinstance(x, torch.Tensor)}
    for x in outputs:
        if isinstance(x, torch.Tensor) and id(x) not in given:
            setattr(x, _MARK, index)
