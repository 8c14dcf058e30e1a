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
lower precision, as torch_npu's policy lists them; ``lstm`` and ``gru`` are not).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from .. import _runtime, _wraps
from .._device import placement, soc
from .._fp16 import fp32_copies, saturation
from .._fp16 import mode as emulation
from ._precision import store_kernel_result

_FLOATS = (torch.float16, torch.bfloat16, torch.float32)
NAMES = ("lstm", "gru", "lstm_cell", "gru_cell")


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


def _covered(tensors: Sequence[Any]) -> bool:
    """Plain tensors of one floating dtype the NPU computes, all on one emulated NPU."""
    first = tensors[0]
    if not isinstance(first, torch.Tensor) or first.dtype not in _FLOATS:
        return False
    npu = placement.npu_of(first)
    if npu is None or (first.dtype == torch.bfloat16 and not soc.has_bf16()):
        return False
    for t in tensors:
        if (
            type(t) not in (torch.Tensor, torch.nn.Parameter)
            or t.dtype != first.dtype
            or placement.npu_of(t) != npu
        ):
            return False
    return True


def _fp32(t: torch.Tensor, rt: Any) -> torch.Tensor:
    """``t.float()``: fp16 and bf16 tensors widened by the runtime ``rt`` in one pass when it is
    there (the same exact values); autocast's casts of the weights, the same tensors at every
    step of a cell, once per region (``fp32_copies.kept_or_new``)."""
    if t.dtype == torch.float32:
        return t
    return fp32_copies.kept_or_new(t, rt)


def _store(values: torch.Tensor, dtype: torch.dtype, npu: Any, sources: Any, rt: Any) -> Any:
    """``_precision.store_kernel_result``, with fp16 and bf16 results rounded by the runtime
    ``rt`` the caller has."""
    if dtype == torch.float32:
        return store_kernel_result(values, dtype, npu, sources)
    return placement.put(saturation.to_reduced(values, dtype, rt), npu)


def _as_tuple(out: Any) -> Tuple[torch.Tensor, ...]:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


class _Recurrent(torch.autograd.Function):
    """One NPU kernel over the whole call: forward and backward run with the emulation paused on
    fp32 copies, and each result is stored once as the NPU stores it."""

    @staticmethod
    def forward(ctx, how: Tuple[Callable, Callable], *tensors: torch.Tensor):  # noqa: D102
        original, rebuild = how
        npu = placement.npu_of(tensors[0])
        ctx.how, ctx.npu = how, npu
        ctx.save_for_backward(*tensors)  # the backward's check that none changed since
        rt = _runtime.runtime_kernels()
        with emulation.paused(), torch.no_grad():
            widened = [_fp32(t, rt) for t in tensors]
            out = _as_tuple(original(*rebuild(widened)))
            # The backward recomputes from the same exact fp32 values: fp16/bf16 inputs' copies
            # are kept rather than widened again (a cell stepped over a sequence widens its
            # weights at every step: twice as many conversions otherwise).
            ctx.widened = widened if tensors[0].dtype != torch.float32 else None
            return tuple(_store(o, tensors[0].dtype, npu, tensors, rt) for o in out)

    @staticmethod
    def backward(ctx, *grads: Optional[torch.Tensor]):  # noqa: D102
        original, rebuild = ctx.how
        saved = ctx.saved_tensors
        wanted = [i for i in range(len(saved)) if ctx.needs_input_grad[i + 1]]
        result: List[Optional[torch.Tensor]] = [None] * (len(saved) + 1)
        if not wanted:
            return tuple(result)
        rt = _runtime.runtime_kernels()
        copies = ctx.widened if ctx.widened is not None else saved
        with emulation.paused(), torch.enable_grad():
            fp32 = [t.detach().requires_grad_(i in wanted) for i, t in enumerate(copies)]
            out = _as_tuple(original(*rebuild(fp32)))
            pairs = [(o, _fp32(g, rt)) for o, g in zip(out, grads) if g is not None]
            if not pairs:
                return tuple(result)
            found = torch.autograd.grad(
                [o for o, _ in pairs],
                [fp32[i] for i in wanted],
                [g for _, g in pairs],
                allow_unused=True,
            )
            sources = [g for g in grads if g is not None] + list(saved)
            for i, g in zip(wanted, found):
                if g is not None:
                    result[i + 1] = _store(g, saved[i].dtype, ctx.npu, sources, rt)
        return tuple(result)


def run(name: str, original: Callable, args: Sequence[Any]) -> Any:
    """``original(*args)`` as one NPU kernel when it covers the call, else ``original`` itself
    (torch's decomposition, each operation emulated)."""
    found = _tensors_of(name, args)
    if found is None or not _covered(found[0]):
        return original(*args)
    tensors, rebuild = found
    out = _Recurrent.apply((original, rebuild), *tensors)
    if name == "lstm":
        return out[0], out[1], out[2]
    if name == "gru":
        return out[0], out[1]
    if name == "lstm_cell":
        return out[0], out[1]
    return out[0]


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

    _wraps.install_in_vf(
        NAMES,
        lambda name, original: _wraps.vf_wrapper(name, original, run, _flat_tensors),
        before=autocast_mode.stands_for_torch,
    )


def originals() -> Dict[str, Callable]:
    """torch's own functions the wrappers stand for (for tests and references)."""
    return _wraps.vf_originals(NAMES)
