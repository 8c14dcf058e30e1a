"""torch's recurrent layers on NPU tensors as whole-sequence kernels: ``nn.LSTM``, ``nn.GRU``,
``nn.LSTMCell`` and ``nn.GRUCell`` (``torch._VF.lstm``, ``gru``, ``lstm_cell``, ``gru_cell``).

On an NPU, torch_npu runs each of these as one kernel (DynamicRNN / DynamicGRUV2 and their cell
forms): the gates are accumulated in fp32 inside the kernel and each fp16/bf16 result is stored
once. CPU torch instead decomposes them (CompositeImplicitAutograd) into a dozen small operations
per time step before the emulation's dispatch mode sees them; the emulator then paid its fixed
cost per fp16 operation at every step and rounded every gate to fp16, which the NPU does not.
So on NPU tensors the emulator replaces each call with one kernel: torch's own CPU
implementation of the same layer, run on exact fp32 copies of the inputs and weights with the
emulation paused (its steps are the kernel's fp32 arithmetic, not NPU operations of their own),
each output stored once in the input's dtype as the NPU stores it (fp16 saturating and raising
the float status on a 910 in saturation mode; bf16 rounded once; fp32 overflows on a 910 stored
as +-FLT_MAX). The states carried from step to step stay fp32 inside the kernel. The backward
recomputes the forward in fp32 and takes torch's gradient of it, each gradient stored once in
its input's dtype.

The emulation's fp16 path (general or fast) plays no part inside, so both give the same bits.
Calls the kernel does not cover keep torch's decomposition (each step emulated as before):
packed sequences, dropout between layers while training (its draws belong to the NPU's
generator), inputs of mixed or non-floating dtypes, bf16 on a chip without bf16 (refused there
as before), tensors that are not all on one NPU, tensor subclasses, and host tensors.

Autocast meets the wrappers under torch's names (``lstm_cell`` and ``gru_cell`` are cast to the
lower precision, as torch_npu's policy lists them; ``lstm`` and ``gru`` are not). A cell makes
autocast's casts of its fp32 activations itself (``autocast_mode.casts_inside``): the input and
states are rounded to the lower precision on entry as the cast stores them, and their gradients
leave stored in it and widened back to fp32, as the cast's backward gives them; the weights are
autocast's cached casts, as before, so their gradients still add up in the lower precision over
the steps. The values and the float status are the separate casts'; a cell stepped over time
saves a cast and its backward per step.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

import torch

from .. import _runtime, _wraps
from .._device import placement, soc
from .._fp16 import fp32_copies, overflow_mode, saturation
from .._fp16 import mode as emulation
from ._precision import store_kernel_result

_FLOATS = (torch.float16, torch.bfloat16, torch.float32)
NAMES = ("lstm", "gru", "lstm_cell", "gru_cell")
CELLS = ("lstm_cell", "gru_cell")  # the ones autocast casts to the lower precision


def _tensors_of(name: str, args: Sequence[Any]) -> Optional[Tuple[List[torch.Tensor], Callable]]:
    """The tensor arguments of a call the kernel covers, in order, and a function rebuilding the
    call's arguments from (copies of) them; None for a call it does not cover."""
    if name in ("lstm", "gru"):
        # lstm(input, (h, c), params, bias, layers, dropout, train, bidirectional, batch_first)
        # gru(input, h, params, ...); the packed forms put batch_sizes second and have 9 args
        # for gru / 8 for lstm, all positional.
        if len(args) != 9 or not isinstance(args[2], (list, tuple)):
            return None
        if name == "lstm" and not isinstance(args[1], (list, tuple)):
            return None
        dropout, train = args[5], args[6]
        if train and dropout:
            return None
        hx = list(args[1]) if name == "lstm" else [args[1]]
        params = list(args[2])
        tensors = [args[0]] + hx + params
        n_hx = len(hx)

        def rebuild(ts: List[torch.Tensor]) -> Tuple[Any, ...]:
            h = tuple(ts[1 : 1 + n_hx]) if name == "lstm" else ts[1]
            return (ts[0], h, ts[1 + n_hx :]) + tuple(args[3:])

        return tensors, rebuild
    # lstm_cell(input, (h, c), w_ih, w_hh, b_ih=None, b_hh=None); gru_cell(input, h, ...)
    if not 4 <= len(args) <= 6:
        return None
    if name == "lstm_cell":
        if not isinstance(args[1], (list, tuple)) or len(args[1]) != 2:
            return None
        hx = list(args[1])
    else:
        hx = [args[1]]
    rest = list(args[2:])
    present = [i for i, t in enumerate(rest) if t is not None]
    tensors = [args[0]] + hx + [rest[i] for i in present]
    n_hx = len(hx)

    def rebuild_cell(ts: List[torch.Tensor]) -> Tuple[Any, ...]:
        h = tuple(ts[1 : 1 + n_hx]) if name == "lstm_cell" else ts[1]
        weights: List[Any] = [None] * len(rest)
        for i, t in zip(present, ts[1 + n_hx :]):
            weights[i] = t
        return (ts[0], h, *weights)

    return tensors, rebuild_cell


def _covered(
    tensors: Sequence[Any], cast_to: Optional[torch.dtype] = None
) -> Optional[Tuple[torch.dtype, FrozenSet[int]]]:
    """(the dtype the kernel computes in and stores, the indices of the fp32 tensors it casts to
    it on entry) for plain tensors all on one emulated NPU, of one floating dtype the NPU
    computes, or, with ``cast_to`` (autocast's fp16 or bf16), each of ``cast_to`` or fp32; None
    for a call the kernel does not cover."""
    first = tensors[0]
    if not isinstance(first, torch.Tensor):
        return None
    dtype = first.dtype if cast_to is None else cast_to
    if dtype not in _FLOATS or (cast_to is not None and dtype == torch.float32):
        return None
    npu = placement.npu_of(first)
    if npu is None or (dtype == torch.bfloat16 and not soc.has_bf16()):
        return None
    rounded = []
    for i, t in enumerate(tensors):
        if type(t) not in (torch.Tensor, torch.nn.Parameter) or placement.npu_of(t) != npu:
            return None
        if t.dtype != dtype:
            if cast_to is None or t.dtype != torch.float32:
                return None
            rounded.append(i)
    return dtype, frozenset(rounded)


def _fp32(t: torch.Tensor, rt: Any) -> torch.Tensor:
    """``t.float()``: fp16 and bf16 tensors widened by the runtime ``rt`` in one pass when it is
    there (the same exact values); autocast's casts of the weights, the same tensors at every
    step of a cell, once per region (``fp32_copies.kept_or_new``)."""
    if t.dtype == torch.float32:
        return t
    return fp32_copies.kept_or_new(t, rt)


def _cast_on_entry(t: torch.Tensor, dtype: torch.dtype, rt: Any) -> torch.Tensor:
    """The fp32 values of autocast's cast of the fp32 ``t`` to ``dtype``: stored as the cast
    stores them (rounded once, saturating or not as the chip does, the status raised as it
    raises it), in the contiguous layout the cast's result has, and widened back exactly."""
    values = t.detach()  # a host tensor: the rounded copy is the kernel's, not NPU memory
    if not values.is_contiguous():
        values = values.contiguous()
    return fp32_copies.to_fp32(_reduced(values, dtype, rt), rt)


def _reduced(values: torch.Tensor, dtype: torch.dtype, rt: Any) -> torch.Tensor:
    """``saturation.to_reduced`` of fp32 values the kernel made (host tensors), bf16 ones
    handed straight to the runtime ``rt``'s one pass."""
    if dtype == torch.bfloat16:
        return saturation.host_to_bf16(values, rt, overflow_mode.inf_nan())
    return saturation.to_reduced(values, dtype, rt)


def _store(values: torch.Tensor, dtype: torch.dtype, npu: Any, sources: Any, rt: Any) -> Any:
    """``_precision.store_kernel_result``, with fp16 and bf16 results rounded by the runtime
    ``rt`` the caller has."""
    if dtype == torch.float32:
        return store_kernel_result(values, dtype, npu, sources)
    return placement.put(_reduced(values, dtype, rt), npu)


def _as_tuple(out: Any) -> Tuple[torch.Tensor, ...]:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


class _Call(NamedTuple):
    """How the kernel runs a call: torch's own function, the call's arguments rebuilt from (fp32
    copies of) its tensors, the dtype it stores its results in, and the indices of the fp32
    tensors it casts to that dtype on entry (autocast's casts, made inside)."""

    original: Callable
    rebuild: Callable
    dtype: torch.dtype
    rounded: FrozenSet[int]


class _Recurrent(torch.autograd.Function):
    """One NPU kernel over the whole call: forward and backward run with the emulation paused on
    fp32 copies, and each result is stored once as the NPU stores it."""

    @staticmethod
    def forward(ctx, call: _Call, *tensors: torch.Tensor):  # noqa: D102
        npu = placement.npu_of(tensors[0])
        ctx.call, ctx.npu = call, npu
        dtype, rounded = call.dtype, call.rounded
        # The backward's check that none changed since; a tensor cast on entry is not the
        # kernel's input but its cast, which nothing else holds (the source may change after).
        ctx.save_for_backward(*(None if i in rounded else t for i, t in enumerate(tensors)))
        rt = _runtime.runtime_kernels()
        with emulation.paused(), torch.no_grad():
            widened = [
                _cast_on_entry(t, dtype, rt) if i in rounded else _fp32(t, rt)
                for i, t in enumerate(tensors)
            ]
            out = _as_tuple(call.original(*call.rebuild(widened)))
            # The backward recomputes from the same exact fp32 values: fp16/bf16 inputs' copies
            # are kept rather than widened again (a cell stepped over a sequence widens its
            # weights at every step: twice as many conversions otherwise).
            ctx.widened = widened if dtype != torch.float32 else None
            return tuple(_store(o, dtype, npu, tensors, rt) for o in out)

    @staticmethod
    def backward(ctx, *grads: Optional[torch.Tensor]):  # noqa: D102
        call: _Call = ctx.call
        saved = ctx.saved_tensors
        wanted = [i for i in range(len(saved)) if ctx.needs_input_grad[i + 1]]
        result: List[Optional[torch.Tensor]] = [None] * (len(saved) + 1)
        if not wanted:
            return tuple(result)
        rt = _runtime.runtime_kernels()
        copies = ctx.widened if ctx.widened is not None else saved
        needed = set(wanted)
        with emulation.paused(), torch.enable_grad():
            fp32 = [t.detach().requires_grad_(i in needed) for i, t in enumerate(copies)]
            out = _as_tuple(call.original(*call.rebuild(fp32)))
            pairs = [(o, _fp32(g, rt)) for o, g in zip(out, grads) if g is not None]
            if not pairs:
                return tuple(result)
            found = torch.autograd.grad(
                [o for o, _ in pairs],
                [fp32[i] for i in wanted],
                [g for _, g in pairs],
                allow_unused=True,
            )
            sources: List[Any] = []  # what an fp32 store checks for infinities that came in
            if call.dtype == torch.float32:
                sources = [g for g in grads if g is not None] + list(saved)
            for i, g in zip(wanted, found):
                if g is None:
                    continue
                if i in call.rounded:
                    # Stored in the cast's dtype, then the cast's backward: widened exactly.
                    stored = _reduced(g, call.dtype, rt)
                    result[i + 1] = placement.put(fp32_copies.to_fp32(stored, rt), ctx.npu)
                else:
                    result[i + 1] = _store(g, call.dtype, ctx.npu, sources, rt)
        return tuple(result)


def _results(name: str, out: Tuple[torch.Tensor, ...]) -> Any:
    """The kernel's outputs as torch's function returns them."""
    if name == "lstm":
        return out[0], out[1], out[2]
    if name in ("gru", "lstm_cell"):
        return out[0], out[1]
    return out[0]


def run(name: str, original: Callable, args: Sequence[Any]) -> Any:
    """``original(*args)`` as one NPU kernel when it covers the call, else ``original`` itself
    (torch's decomposition, each operation emulated)."""
    found = _tensors_of(name, args)
    covered = None if found is None else _covered(found[0])
    if covered is None:
        return original(*args)
    tensors, rebuild = found
    return _results(name, _Recurrent.apply(_Call(original, rebuild, *covered), *tensors))


def run_cast(name: str, original: Callable, args: Sequence[Any], dtype: torch.dtype) -> Any:
    """``run`` for a cell's call that autocast hands over with its fp32 activations not yet
    cast to ``dtype`` (``autocast_mode.casts_inside``): the kernel casts them on entry. None
    when the kernel does not cover the call (autocast then casts and calls as usual)."""
    found = _tensors_of(name, args)
    covered = None if found is None else _covered(found[0], dtype)
    if covered is None:
        return None
    tensors, rebuild = found
    return _results(name, _Recurrent.apply(_Call(original, rebuild, *covered), *tensors))


def _flat_tensors(args: Sequence[Any]) -> Tuple[torch.Tensor, ...]:
    found: List[torch.Tensor] = []
    for a in args:
        if isinstance(a, torch.Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(x for x in a if isinstance(x, torch.Tensor))
    return tuple(found)


def install() -> None:
    """Put the wrappers in ``torch._VF``, where torch's recurrent modules call them
    (idempotent)."""
    from ..npu.amp import autocast_mode

    def before(wrapper: Callable) -> None:
        autocast_mode.stands_for_torch(wrapper)
        name = wrapper.__name__
        if name in CELLS:
            original = wrapper.__wrapped__  # type: ignore[attr-defined]
            autocast_mode.casts_inside(
                wrapper, lambda args, dtype: run_cast(name, original, args, dtype)
            )

    _wraps.install_in_vf(
        NAMES,
        lambda name, original: _wraps.vf_wrapper(name, original, run, _flat_tensors),
        before=before,
    )


def originals() -> Dict[str, Callable]:
    """torch's own functions the wrappers stand for (for tests and references)."""
    return _wraps.vf_originals(NAMES)
