"""Which emulated NPU a tensor is on.

Every emulated NPU is backed by the CPU, so torch itself sees CPU tensors. What makes one an NPU
tensor (``is_npu``, ``device`` ``npu:N``, ``type()`` ``torch.npu.FloatTensor``) is a mark on the
tensor object: the NPU index, kept in the tensor's ``__dict__``. Marks are set where a tensor is
put on an NPU (``npu()``, ``to("npu:N")``, a factory with ``device="npu"``, ``torch.load`` with
an NPU ``map_location``) and follow torch's operations through the emulation's dispatch mode: an
operation's new outputs are on the NPU its inputs are on.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Set

import torch

from . import memory, torch_made

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
        memory.track(tensor, index)  # its storage is NPU memory now
    return tensor


class DeviceMismatch(RuntimeError):
    pass


# Operations that move data between devices, so their tensors may sit on different devices.
CROSS_DEVICE_OPS = frozenset(
    {
        "aten::copy_",
        "aten::_copy_from",
        "aten::_copy_from_and_resize",
        "aten::copy",
        "aten::_to_copy",
        "aten::set_",
    }
)
# Operations that take host index tensors beside device data, as on CUDA and the NPU.
HOST_INDEX_OPS = frozenset(
    {
        "aten::index",
        "aten::index_put_",
        "aten::index_put",
        "aten::_index_put_impl_",
        "aten::_unsafe_index",
        "aten::_unsafe_index_put",
    }
)


def _mismatch(first: str, second: str, op: Any) -> DeviceMismatch:
    return DeviceMismatch(
        f"Expected all tensors to be on the same device, but found at least two "
        f"devices, {first} and {second}! (in {op._schema.name} on the emulated "
        f"NPU)"
    )


def common_npu(
    leaves: Sequence[Any],
    op: Any,
    args: Sequence[Any] = (),
    kwargs: Optional[Dict[str, Any]] = None,
) -> Optional[int]:
    """The NPU the tensors among ``leaves`` (the arguments ``args``/``kwargs`` of the aten
    operation ``op``, flattened) are on; None when all are host tensors. As on the NPU, tensors
    on two NPUs, or an NPU tensor beside a host tensor that is not a 0-dim scalar, are an error,
    except in copies between devices and for host indices of indexing.

    A host tensor that the operation only writes (in place or ``out=``) is let through: torch's
    DDP writes gradients into buckets its C++ made on the device's backing memory, the host.
    So is one torch made for itself (``torch_made``): on the NPU it would be an NPU tensor."""
    found: Optional[int] = None
    host: Optional[torch.Tensor] = None  # the first host tensor an NPU kernel would refuse
    for x in leaves:
        if not isinstance(x, torch.Tensor):
            continue
        index = getattr(x, _MARK, None)
        if index is None:
            if (
                host is None
                and x.dim() > 0
                and x.device.type == "cpu"
                and not getattr(x, torch_made.MARK, False)
            ):
                host = x
            continue
        if index == found:
            continue
        if found is None:
            found = index
            continue
        if op._schema.name not in CROSS_DEVICE_OPS:
            raise _mismatch(f"npu:{found}", f"npu:{index}", op)
    if found is not None and host is not None:
        _check_host_beside_npu(op, found, leaves, args, kwargs or {})
    return found


def _written(op: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Set[int]:
    """The ids of the tensors ``op`` writes (its mutable arguments)."""
    ids: Set[int] = set()
    for position, argument in enumerate(op._schema.arguments):
        info = argument.alias_info
        if info is None or not info.is_write:
            continue
        value = kwargs.get(argument.name, args[position] if position < len(args) else None)
        for x in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(x, torch.Tensor):
                ids.add(id(x))
    return ids


def _check_host_beside_npu(
    op: Any, npu: int, leaves: Sequence[Any], args: Sequence[Any], kwargs: Dict[str, Any]
) -> None:
    name = op._schema.name
    if name in CROSS_DEVICE_OPS:
        return
    index_op = name in HOST_INDEX_OPS
    written = _written(op, args, kwargs)
    for x in leaves:
        if (
            not isinstance(x, torch.Tensor)
            or getattr(x, _MARK, None) is not None
            or x.dim() == 0
            or x.device.type != "cpu"
            or id(x) in written
            or getattr(x, torch_made.MARK, False)
        ):
            continue
        if index_op and not (x.is_floating_point() or x.is_complex()):
            continue
        raise _mismatch(f"npu:{npu}", "cpu", op)


def put_outputs(outputs: Iterable[Any], inputs: Iterable[Any], index: int) -> None:
    """Mark the new tensors among ``outputs`` (not the inputs an in-place op returns) as on NPU
    ``index``, and the inputs torch made for itself (``torch_made``) with them."""
    given = set()
    for x in inputs:
        if isinstance(x, torch.Tensor):
            given.add(id(x))
            if getattr(x, torch_made.MARK, False):
                delattr(x, torch_made.MARK)
                setattr(x, _MARK, index)
                memory.track(x, index)
    for x in outputs:
        # A meta tensor (``to("meta")``, ``empty_like(..., device="meta")``) has no memory on
        # any device, so it is on no NPU.
        if isinstance(x, torch.Tensor) and id(x) not in given and x.device.type != "meta":
            setattr(x, _MARK, index)
            memory.track(x, index)
