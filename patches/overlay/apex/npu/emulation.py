"""fp16 arithmetic of the emulated NPU, as one torch dispatch mode.

CPU torch lacks most fp16 kernels (matmul, conv, softmax, ...). While the mode is active, every
aten operation that reads or writes fp16 data runs in fp32 instead, and its fp16 results are
rounded back to fp16 with NPU saturation (see ``saturation``), as an NPU's fp32 accumulation
would. In-place and ``out=`` operations write back into the original fp16 tensors. View and
metadata operations run unchanged so that aliasing is kept. The mode sees the backward pass too,
because autograd dispatches its backward operations through the same stack.

The mode stack of torch is per thread: the mode applies to the thread that enabled it.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from . import npu_kernels, placement, saturation

try:  # torch >= 1.13
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:  # pragma: no cover - older torch has no dispatch modes
    TorchDispatchMode = object  # type: ignore[misc,assignment]

_HALF = torch.float16
_FLOAT = torch.float32


def _is_half(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.dtype == _HALF


def _runs_unchanged(func) -> bool:
    """Views and metadata changes must act on the original tensor, never on an fp32 copy; so
    must collectives (``c10d::``), which fill their tensors in place and do no arithmetic the
    NPU would do differently (their schemas do not mark the tensors as written); allocations
    have no values to round."""
    schema = func._schema
    if schema.name.startswith("c10d::"):
        return True
    if any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns):
        return True
    if torch.Tag.inplace_view in getattr(func, "tags", ()):
        return True
    return schema.name in _UNCHANGED_OPS


# Operations with nothing to compute: storage changes, and allocations whose values are
# unspecified (an fp32 round trip would read the garbage through the saturation check and raise
# the float status, as DDP's bucket allocation did).
_UNCHANGED_OPS = frozenset({"aten::set_", "aten::resize_", "aten::resize_as_", "aten::empty",
                            "aten::empty_like", "aten::empty_strided", "aten::new_empty",
                            "aten::new_empty_strided"})


def _touches_half(leaves: Sequence[Any]) -> bool:
    return any(_is_half(x) or x is _HALF for x in leaves)


def _upcast(x: Any) -> Any:
    if _is_half(x):
        return x.to(_FLOAT)
    if x is _HALF:
        return _FLOAT
    return x


def _to_meta(x: Any) -> Any:
    return x.to("meta") if isinstance(x, torch.Tensor) else x


def _expected_dtypes(func, args, kwargs) -> Optional[List[Optional[torch.dtype]]]:
    """Dtypes the op's tensor outputs would have with native fp16 kernels (from meta tensors)."""
    try:
        out = func(*tree_map(_to_meta, args), **tree_map(_to_meta, kwargs))
    except Exception:  # some ops have no meta kernel in this torch
        return None
    leaves, _ = tree_flatten(out)
    return [x.dtype if isinstance(x, torch.Tensor) else None for x in leaves]


def _fallback_dtype(args, kwargs) -> torch.dtype:
    """Without meta: the dtype argument if there is one, else the first floating input's dtype."""
    leaves, _ = tree_flatten((args, kwargs))
    for x in leaves:
        if isinstance(x, torch.dtype):
            return x
    for x in leaves:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            return x.dtype
    return _FLOAT


def _mutated_half_args(func, args, kwargs) -> List[Tuple[Any, Any, Optional[frozenset]]]:
    """(key, fp16 tensor, alias set) for each fp16 argument the op writes (in-place, ``out=``)."""
    found = []
    for index, arg in enumerate(func._schema.arguments):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        if arg.kwarg_only or index >= len(args):
            key: Any = arg.name
            value = kwargs.get(arg.name)
        else:
            key = index
            value = args[index]
        if _is_half(value):
            found.append((key, value, frozenset(arg.alias_info.before_set)))
    return found


def run_in_fp32(func, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    """Run ``func`` with fp16 inputs upcast to fp32; round fp16 results back with saturation."""
    expected = _expected_dtypes(func, args, kwargs)
    mutated = _mutated_half_args(func, args, kwargs)

    up_args = list(tree_map(_upcast, tuple(args)))
    up_kwargs = tree_map(_upcast, dict(kwargs))
    scratch_by_alias: Dict[frozenset, Tuple[torch.Tensor, torch.Tensor]] = {}
    for key, original, alias in mutated:
        scratch = up_args[key] if isinstance(key, int) else up_kwargs[key]
        scratch_by_alias[alias] = (original, scratch)

    result = func(*up_args, **up_kwargs)

    for original, scratch in scratch_by_alias.values():
        saturation.store_fp16(original, scratch)

    # Returns that alias a written argument are that argument itself.
    returns = func._schema.returns
    flat, spec = tree_flatten(result)
    if len(returns) == len(flat):
        for i, ret in enumerate(returns):
            if ret.alias_info is not None and ret.alias_info.is_write:
                alias = frozenset(ret.alias_info.before_set)
                if alias in scratch_by_alias:
                    flat[i] = scratch_by_alias[alias][0]
    written = {id(orig) for orig, _ in scratch_by_alias.values()}
    fallback = _fallback_dtype(args, kwargs)
    for i, x in enumerate(flat):
        if not isinstance(x, torch.Tensor) or id(x) in written:
            continue
        want = expected[i] if expected is not None and i < len(expected) else fallback
        if want == _HALF and x.is_floating_point() and x.dtype != _HALF:
            flat[i] = saturation.to_fp16(x)
    return tree_unflatten(flat, spec)


class EmulatedNpuMode(TorchDispatchMode):
    """Dispatch mode that gives CPU torch the fp16 arithmetic of an NPU, and puts each
    operation's new outputs on the NPU its inputs are on (see ``placement``)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        leaves, _ = tree_flatten((args, kwargs))
        npu = placement.common_npu(leaves, func)
        out = None
        if npu is not None and func in npu_kernels.OPS:
            (args, kwargs), out = npu_kernels.npu_call(func, args, kwargs)
        if out is not None:
            pass
        elif _runs_unchanged(func) or not _touches_half(leaves):
            out = func(*args, **kwargs)
        else:
            out = run_in_fp32(func, args, kwargs)
        if npu is not None:
            placement.put_outputs(tree_flatten(out)[0], leaves, npu)
        return out


def _install_legacy_constructor_fix() -> None:
    """Let ``torch.Tensor(...)`` construct under the mode.

    torch 1.13's legacy constructor fails when any dispatch mode is active ("the raw Tensor
    object is already associated to a python object"); construction involves no fp16
    arithmetic, so it runs with the emulation paused.
    """
    if getattr(torch.Tensor.__new__, "_apexnpu_pauses_emulation", False):
        return
    base_new = torch.Tensor.__new__

    def tensor_new(cls, *args, **kwargs):
        if isinstance(_current_mode(), EmulatedNpuMode):
            from torch.utils._python_dispatch import _pop_mode_temporarily

            with _pop_mode_temporarily():
                return base_new(cls, *args, **kwargs)
        return base_new(cls, *args, **kwargs)

    tensor_new._apexnpu_pauses_emulation = True  # type: ignore[attr-defined]
    torch.Tensor.__new__ = staticmethod(tensor_new)  # type: ignore[assignment]


def _current_mode():
    try:
        from torch.utils._python_dispatch import _get_current_dispatch_mode
    except ImportError:  # pragma: no cover - other torch versions
        return None
    return _get_current_dispatch_mode()


_state = threading.local()


def _active_mode() -> Optional[EmulatedNpuMode]:
    return getattr(_state, "mode", None)


def enable() -> None:
    """Turn the emulation on for the calling thread (idempotent)."""
    if _active_mode() is not None:
        return
    _install_legacy_constructor_fix()
    mode = EmulatedNpuMode()
    mode.__enter__()
    _state.mode = mode


def disable() -> None:
    """Turn the emulation off for the calling thread, if this module turned it on."""
    mode = _active_mode()
    if mode is None:
        return
    _state.mode = None
    mode.__exit__(None, None, None)


def is_enabled() -> bool:
    """Whether the calling thread runs with the emulation."""
    return _active_mode() is not None


class enabled:  # noqa: N801 - used like a function: ``with emulation.enabled():``
    """Context manager: the emulation on inside the block, restored to its prior state after."""

    def __enter__(self) -> "enabled":
        self._was_enabled = is_enabled()
        enable()
        return self

    def __exit__(self, *exc) -> None:
        if not self._was_enabled:
            disable()
