"""fp16 and bf16 arithmetic of the emulated NPU, as one torch dispatch mode.

CPU torch lacks most fp16 kernels (matmul, conv, softmax, ...). While the mode is active, every
aten operation that reads or writes fp16 data runs in fp32 instead, and its fp16 results are
rounded back to fp16 with NPU saturation (see ``saturation``), as an NPU's fp32 accumulation
would: ``general_path`` does it, ``fast_path`` gives the same bits at less cost, and
``emulation_path`` says which runs. bf16 operations on an NPU run the general path too (fp32,
rounded once) when the chip has bf16 (``soc``, a 910B); on a 910 they are refused, as the chip
refuses them, except copies that only move bf16 data. Host bf16 operations stay CPU torch's.
fp32 results of NPU operations are stored as the chip does too (``fp32_saturation``): on a 910 in
saturation mode an overflow is stored as ±FLT_MAX and raises the float status. In-place and
``out=`` operations write back into the original fp16 tensors. View and metadata operations
run unchanged so that aliasing is kept. The mode sees the backward pass too, because autograd
dispatches its backward operations through the same stack. New outputs of NPU operations are
contiguous, as torch_npu's (``contiguous_outputs``). torch 2.x's higher-order operators
(``out_dtype``, ``cond``, ...) come to the mode too: the aten operations inside them are emulated.

The mode stack of torch is per thread: the mode applies to the thread that enabled it.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any, Iterator, Optional, Sequence

import torch
from torch.utils._pytree import tree_flatten

from .._device import (
    contiguous_outputs,
    devices,
    foreach_split,
    formats,
    generators,
    host_allocator,
    memory,
    meta,
    placement,
    soc,
    torch_made,
)
from . import (
    bf16_gemms,
    fast_path,
    fp32_saturation,
    general_path,
    npu_kernels,
    op_schema,
    overflow_mode,
)
from . import path as emulation_path

try:  # torch >= 1.13
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:  # pragma: no cover - older torch has no dispatch modes
    TorchDispatchMode = object  # type: ignore[misc,assignment]

_HALF = torch.float16
_BF16 = torch.bfloat16
HALF, BF16 = 1, 2  # what ``reduced_kinds`` finds

# torch 2.x lets a mode hand an operation on tensor subclasses back to them (NotImplemented).
_DEFERS = int(torch.__version__.split(".")[0]) >= 2
_deferring: dict = {}  # tuple of subclass types -> whether the mode hands their operations back


def _defers_to(types: Any) -> bool:
    """Whether an operation on tensors of these subclasses goes to the subclasses first: every
    subclass with a dispatch of its own (DTensor: its shards are computed by the NPU), except
    fake tensors, which wait for the modes above them and run on no device."""
    known = _deferring.get(types)
    if known is None:
        fake = getattr(sys.modules.get("torch._subclasses.fake_tensor"), "FakeTensor", ())
        plain = torch.Tensor.__torch_dispatch__
        known = _deferring[types] = _DEFERS and any(
            t.__torch_dispatch__ is not plain and not (fake and issubclass(t, fake)) for t in types
        )
    return known


# Operations that only move data: a 910 moves bf16 bytes it cannot compute on.
_MOVES = frozenset(
    {
        "aten::copy_",
        "aten::_to_copy",
        "aten::_copy_from",
        "aten::_copy_from_and_resize",
        "aten::clone",
    }
)


def reduced_kinds(leaves: Sequence[Any]) -> int:
    """HALF | BF16: the reduced dtypes among ``leaves`` (tensors or dtype arguments)."""
    kinds = 0
    for x in leaves:  # a loop, not any(): every operation asks
        dtype = x.dtype if isinstance(x, torch.Tensor) else x
        if dtype is _HALF:
            kinds |= HALF
        elif dtype is _BF16:
            kinds |= BF16
    return kinds


def _moves_bf16_only(func: Any, leaves: Sequence[Any]) -> bool:
    """A copy whose tensors are all bf16: no bf16 arithmetic, no conversion."""
    if func._schema.name not in _MOVES:
        return False
    return all(x.dtype is _BF16 for x in leaves if isinstance(x, torch.Tensor)) and not any(
        isinstance(x, torch.dtype) and x is not _BF16 for x in leaves
    )


def _no_bf16(func: Any) -> RuntimeError:
    from ..utils._error_code import ErrCode, ops_error

    return RuntimeError(
        f"{func._schema.name}: bfloat16 is not supported on {soc.name()}: the "
        "Ascend 910 family computes no bf16 (a 910B does: "
        f"{soc.VARIABLE}=Ascend910B1)" + ops_error(ErrCode.NOT_SUPPORT)
    )


try:  # torch 2.x: operators that take functions or operators (out_dtype, cond, ...)
    from torch._ops import HigherOrderOperator, OperatorBase, OpOverloadPacket, _compute_keyset
except ImportError:  # pragma: no cover - torch 1.x has none
    HigherOrderOperator = _compute_keyset = None  # type: ignore[assignment,misc]


def _under(mode: Any, fn: Any) -> Any:
    """``fn`` run with ``mode`` on."""

    def run(*args: Any, **kwargs: Any) -> Any:
        with mode:
            return fn(*args, **kwargs)

    return run


def _run_higher_order(mode: Any, func: Any, args: Any, kwargs: Any) -> Any:
    """A higher-order operator, which torch hands to the mode with the mode off: its kernel for
    its tensors' dispatch keys runs, and the aten operations it calls are the emulated NPU's.
    Torch's kernels that call functions of the program (cond's branches, scan's body) want no
    mode on themselves, so those functions run with the mode on; the others (out_dtype's)
    run with it. Below another mode (the key is still Python's), the operator goes on to that
    mode as torch sends it."""
    key = _compute_keyset(args, kwargs, func.non_fallthrough_keys).highestPriorityTypeId()
    if key == torch._C.DispatchKey.Python:
        return func(*args, **kwargs)
    functions = [
        callable(a) and not isinstance(a, (torch.Tensor, OperatorBase, OpOverloadPacket))
        for a in args
    ]
    if any(functions):
        args = tuple(_under(mode, a) if f else a for a, f in zip(args, functions))
        return func.dispatch(key, *args, **kwargs)
    with mode:
        return func.dispatch(key, *args, **kwargs)


class EmulatedNpuMode(TorchDispatchMode):
    """Dispatch mode that gives CPU torch the fp16 arithmetic of an NPU, and puts each
    operation's new outputs on the NPU its inputs are on (see ``placement``)."""

    supports_higher_order_operators = True  # torch 2.x: they come to ``__torch_dispatch__``

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if HigherOrderOperator is not None and isinstance(func, HigherOrderOperator):
            return _run_higher_order(self, func, args, kwargs or {})
        if kwargs and getattr(kwargs.get("device"), "type", None) == "npu":
            return self._made_on_npu(func, types, args, kwargs)
        if types and _defers_to(types):
            # A tensor subclass with its own dispatch (DTensor) runs first and calls the plain
            # operations on the tensors it holds, which come back here: the NPU computes those.
            return NotImplemented
        kwargs = kwargs or {}
        if generators.draws(func):  # a random operation: from its NPU's generator
            return generators.draw(
                func, args, kwargs, lambda a, k: self.__torch_dispatch__(func, types, a, k)
            )
        spread = foreach_split.positions_by_npu(func, args, kwargs)
        if spread is not None:
            return foreach_split.run_per_npu(
                lambda a, k: self.__torch_dispatch__(func, types, a, k), args, kwargs, spread
            )
        fast = emulation_path.is_fast()
        leaves = fast_path.leaves(args, kwargs) if fast else tree_flatten((args, kwargs))[0]
        npu = placement.common_npu(leaves, func, args, kwargs)
        unchanged = fast_path.runs_unchanged(func) if fast else op_schema.runs_unchanged(func)
        kinds = reduced_kinds(leaves)
        if meta.runs_on_meta(leaves, kwargs, kinds != 0):
            return func(*args, **kwargs)  # no values: nothing to round, on no NPU
        npu_bf16 = npu is not None and kinds & BF16 and not unchanged
        if npu_bf16 and not soc.has_bf16() and not _moves_bf16_only(func, leaves):
            raise _no_bf16(func)
        out = None
        if npu is not None and func in npu_kernels.OPS:
            (args, kwargs), out = npu_kernels.npu_call(func, args, kwargs)
        plain = False  # the op ran as CPU torch runs it, in fp32 where its data is fp32
        if out is not None:
            plain = not unchanged
        elif npu_bf16 and func in bf16_gemms.OPS:
            out = bf16_gemms.run(func, args, kwargs)  # torch's bf16 GEMM on both paths, or None
        if out is None:
            if unchanged or not (kinds & HALF or npu_bf16):
                out = func(*args, **kwargs)
                plain = not unchanged
            elif not fast:
                out = general_path.run_in_fp32(func, args, kwargs)
            else:
                out = fast_path.run_in_fp32(func, args, kwargs)
        if npu is None:
            torch_made.note(func, out)
            return out
        if not unchanged and not op_schema.schema_of(func).written:
            out = contiguous_outputs.made_contiguous(out, kwargs)
        outputs = fast_path.output_leaves(out) if fast else tree_flatten(out)[0]
        placement.put_outputs(outputs, leaves, npu)
        if plain and not overflow_mode.inf_nan():
            fp32_saturation.saturate(func, args, kwargs, outputs, leaves)
        if (
            getattr(func, "overloadpacket", None) in formats.INHERITING_OPS
            and args
            and placement.npu_of(out) is not None
        ):
            formats.inherit(args[0], out)  # the NPU makes these in the input's format
        return out

    def _made_on_npu(self, func, types, args, kwargs):
        """An aten operation told to make its result on an NPU (``device=npu:N``, as
        ``torch.ops.aten.empty.memory_format`` or a quantized or sparse maker called directly
        are): it makes it in host memory, which is the NPU's, on that NPU."""
        device = kwargs["device"]
        index = devices.current_device() if device.index is None else device.index
        kwargs = dict(kwargs, device=torch.device("cpu"))
        with memory.allocation_guard(index):
            out = self.__torch_dispatch__(func, types, args, kwargs)
        outputs = fast_path.output_leaves(out) if emulation_path.is_fast() else tree_flatten(out)[0]
        placement.put_outputs(outputs, tree_flatten((args, kwargs))[0], index)
        return out


def _install_legacy_constructor_fix() -> None:
    """Let ``torch.Tensor(...)`` and tensor subclasses construct under the mode.

    torch's legacy constructor fails when any dispatch mode is active ("the raw Tensor object is
    already associated to a python object"; torch 2.x only for subclasses); construction
    involves no fp16 arithmetic, so it runs with the emulation paused.
    """
    if getattr(torch.Tensor.__new__, "_apexnpu_pauses_emulation", False):
        return
    base_new = torch.Tensor.__new__

    # (*args, **kwargs) only: torch 2.x's dynamo accepts that signature for torch.Tensor.__new__.
    def tensor_new(*args, **kwargs):
        if isinstance(_current_mode(), EmulatedNpuMode):
            from torch.utils._python_dispatch import _pop_mode_temporarily

            with _pop_mode_temporarily():
                return base_new(*args, **kwargs)
        return base_new(*args, **kwargs)

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
    if emulation_path.is_fast():
        host_allocator.keep_freed_memory()
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


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The block runs without the emulation's mode (when it is the current mode): what it makes
    carries no NPU mark, so no Python state."""
    if isinstance(_current_mode(), EmulatedNpuMode):
        from torch.utils._python_dispatch import _pop_mode_temporarily

        with _pop_mode_temporarily():
            yield
    else:
        yield


class enabled:  # noqa: N801 - used like a function: ``with emulation.enabled():``
    """Context manager: the emulation on inside the block, restored to its prior state after."""

    def __enter__(self) -> "enabled":
        self._was_enabled = is_enabled()
        enable()
        return self

    def __exit__(self, *exc) -> None:
        if not self._was_enabled:
            disable()
