"""The device argument of a torch call: where it is, which NPU it names, and the call with the
CPU (the emulated NPU's backing device) in its place.

An int names an NPU, as it does with torch_npu: torch 2.x reads a bare index as one of the
accelerator's devices, and torch_npu 1.x's device parser reads it as an NPU's. So
``torch.zeros(2, device=1)``, ``t.to(0)`` and ``Module.to(0)`` put tensors on ``npu:1``/``npu:0``.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

from . import devices

Where = Optional[Tuple[str, Any]]  # ("kw", name) or ("pos", index); None: not given


def find(
    args: Sequence[Any],
    kwargs: Dict[str, Any],
    position: Optional[int] = None,
    name: str = "device",
) -> Tuple[Any, Where]:
    """The device argument (keyword ``name``, or positional at ``position``) and where it is."""
    if name in kwargs:
        return kwargs[name], ("kw", name)
    if position is not None and len(args) > position:
        return args[position], ("pos", position)
    return None, None


def names_a_device(args: Sequence[Any], kwargs: Dict[str, Any], where: Where) -> bool:
    """Whether the argument at ``where`` is given and not None."""
    if where is None:
        return False
    kind, key = where
    return (kwargs.get(key) if kind == "kw" else args[key]) is not None


def replace(
    args: Sequence[Any], kwargs: Dict[str, Any], where: Where, value: Any
) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """``(args, kwargs)`` with the argument at ``where`` set to ``value``."""
    if where is None:
        return tuple(args), kwargs
    kind, key = where
    if kind == "kw":
        kwargs = dict(kwargs)
        kwargs[key] = value
        return tuple(args), kwargs
    new_args = list(args)
    new_args[key] = value
    return tuple(new_args), kwargs


def npu_named(value: Any, what: str) -> Optional[int]:
    """The NPU a device argument names (an int index, "npu:N", an NPU ``torch.device``), or None
    when it names another device or none."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise RuntimeError(f"{what}: Device index must not be negative, got {value}")
        return devices.check_index(value, what)
    return devices.npu_index(value, what)


def to_host(
    args: Sequence[Any], kwargs: Dict[str, Any], what: str, position: Optional[int] = None
) -> Tuple[Optional[int], Where, Tuple[Any, ...], Dict[str, Any]]:
    """(the NPU the device argument names or None, where it is, args, kwargs), the args with the
    CPU in place of an NPU device so that torch accepts them."""
    value, where = find(args, kwargs, position)
    npu = npu_named(value, what) if where is not None else None
    if npu is None:
        return None, where, tuple(args), kwargs
    new_args, new_kwargs = replace(args, kwargs, where, "cpu")
    return npu, where, new_args, new_kwargs
