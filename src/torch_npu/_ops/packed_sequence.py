"""torch's packed sequences (``torch.nn.utils.rnn``) with NPU data and host lengths.

torch keeps a packed sequence's bookkeeping on the host whatever device its data is on: the
lengths given to ``pack_padded_sequence`` must be a 1-D CPU int64 tensor, the ``batch_sizes``
it makes stay on the host (its C++ makes them with the lengths' options), and so do the lengths
``pad_packed_sequence`` returns. The recurrent layers read ``batch_sizes`` on the host too. On
an NPU, as on CUDA, the data moves to the device and these do not.

The emulation's dispatch mode would refuse the host lengths beside NPU data (the device check)
and put every new output on the NPU, ``batch_sizes`` too; and torch's composite backward of the
packing, and its unpacking, make their results with host options, off the NPU. So
``torch._VF._pack_padded_sequence`` and ``_pad_packed_sequence`` (where ``torch.nn.utils.rnn``
calls them) run here as one kernel each, forward and backward, on the tensors behind the NPU's
with the emulation paused: they only move data, so nothing is rounded. The data they make is
put on the input's NPU and the bookkeeping stays on the host. Lengths or batch sizes on an NPU
are refused in torch's words, as CUDA refuses them.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import torch

from .. import _wraps
from .._device import placement
from .._fp16 import mode as emulation

NAMES = ("_pack_padded_sequence", "_pad_packed_sequence")


def _on_host(what: str, t: Any, npu: int) -> None:
    """torch's check of a bookkeeping tensor (``lengths``, ``batch_sizes``): 1-D, int64, on the
    host (CPU)."""
    if not isinstance(t, torch.Tensor):
        return  # torch's own error follows
    where = placement.npu_of(t)
    if t.dim() != 1 or where is not None or t.dtype != torch.int64:
        device = f"npu:{where}" if where is not None else "cpu"
        raise RuntimeError(
            f"'{what}' argument should be a 1D CPU int64 tensor, but got {t.dim()}D {device} "
            f"{t.dtype} tensor (the data is on npu:{npu}; torch keeps a packed sequence's "
            f"{what} on the host)"
        )


class _Pack(torch.autograd.Function):
    """The packing of NPU data as one kernel: it and its backward only move data, so they run
    on the tensors behind the NPU's with the emulation paused (torch's backward of it would make
    the input's gradient with the host's options, off the NPU)."""

    @staticmethod
    def forward(ctx, original: Callable, data: torch.Tensor, lengths: Any, batch_first: bool):  # noqa: D102
        npu = placement.npu_of(data)
        with emulation.paused():
            out, batch_sizes = original(data, lengths, batch_first)
        ctx.npu, ctx.batch_first, ctx.sizes = npu, batch_first, tuple(data.shape)
        ctx.save_for_backward(batch_sizes)
        ctx.mark_non_differentiable(batch_sizes)
        return placement.put(out, npu), batch_sizes

    @staticmethod
    def backward(ctx, grad: torch.Tensor, _: Any):  # noqa: D102
        (batch_sizes,) = ctx.saved_tensors
        with emulation.paused():
            grad_input = torch.ops.aten._pack_padded_sequence_backward(
                grad, list(ctx.sizes), batch_sizes, ctx.batch_first
            )
        return None, placement.put(grad_input, ctx.npu), None, None


class _Pad(torch.autograd.Function):
    """The unpacking of NPU data as one kernel, as ``_Pack``; its backward is torch's own
    gradient of it, taken with the emulation paused."""

    @staticmethod
    def forward(ctx, original: Callable, data: torch.Tensor, *rest: Any):  # noqa: D102
        npu = placement.npu_of(data)
        with emulation.paused():
            padded, lengths = original(data, *rest)
        ctx.original, ctx.npu, ctx.rest = original, npu, rest
        ctx.save_for_backward(data)
        ctx.mark_non_differentiable(lengths)
        return placement.put(padded, npu), lengths

    @staticmethod
    def backward(ctx, grad: torch.Tensor, _: Any):  # noqa: D102
        (data,) = ctx.saved_tensors
        with emulation.paused(), torch.enable_grad():
            data = data.detach().requires_grad_()
            padded, _lengths = ctx.original(data, *ctx.rest)
            (grad_data,) = torch.autograd.grad(padded, data, grad)
        return (None, placement.put(grad_data, ctx.npu)) + (None,) * len(ctx.rest)


def _run(name: str, original: Callable, args: Tuple[Any, ...]) -> Any:
    data = args[0] if args else None
    npu = placement.npu_of(data)
    if npu is None or not emulation.is_enabled() or len(args) < 2:
        return original(*args)
    if name == "_pack_padded_sequence":
        _on_host("lengths", args[1], npu)
        return _Pack.apply(original, *args)
    _on_host("batch_sizes", args[1], npu)
    return _Pad.apply(original, *args)


def _tensors(args: Any) -> Tuple[torch.Tensor, ...]:
    return tuple(a for a in args if isinstance(a, torch.Tensor))


def install() -> None:
    """Put the wrappers in ``torch._VF``, where ``torch.nn.utils.rnn`` calls them
    (idempotent)."""
    _wraps.install_in_vf(
        NAMES, lambda name, original: _wraps.vf_wrapper(name, original, _run, _tensors)
    )


def originals() -> Dict[str, Callable]:
    """torch's own functions the wrappers stand for (for tests and references)."""
    return _wraps.vf_originals(NAMES)
