"""One operation on both emulation paths, for tests that hold the fast path to the general
path's bits: fresh NPU copies of the inputs, the float status clear before and read after, and
the results compared by their bits (NaN payloads too), dtype, sizes, strides and NPU.

torch_npu is imported on first use, not here: a test file puts the emulator it wants (with or
without the compiled runtime) on sys.path first."""

from __future__ import annotations

from typing import Any, Callable, Sequence, Tuple

import torch

from .emulation_off import plain_torch


def every_bf16() -> torch.Tensor:
    """The 65536 bf16 bit patterns, in order, as a host tensor."""
    with plain_torch():
        return torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)


def bits_of(t: torch.Tensor) -> torch.Tensor:
    """The 16-bit patterns of an fp16 or bf16 tensor, as int64 values 0..65535."""
    with plain_torch():
        return t.view(torch.int16).to(torch.int64) & 0xFFFF


def run(path: str, fn: Callable, inputs: Sequence[torch.Tensor]) -> Tuple[Any, bool]:
    """(result, float status) of ``fn`` on NPU copies of ``inputs`` on the emulation ``path``."""
    from torch_npu._device import placement

    with plain_torch():
        inputs = [placement.put(x.clone(), 0) for x in inputs]
    return on_path(path, fn, inputs)


def on_path(path: str, fn: Callable, inputs: Sequence[torch.Tensor]) -> Tuple[Any, bool]:
    """(result, float status) of ``fn`` on ``inputs`` as they are, on the emulation ``path``;
    the status clear before and after."""
    from torch_npu._fp16 import float_status
    from torch_npu._fp16 import path as emulation_path

    float_status.clear()
    with emulation_path.using(path):
        out = fn(*inputs)
    status = float_status.get()
    float_status.clear()
    return out, status


def both_paths(fn: Callable, *inputs: torch.Tensor) -> Tuple[torch.Tensor, bool]:
    """The result of the general path and its float status, after checking the fast path gives
    the same bits, dtype, sizes, strides, NPU and status."""
    from torch_npu._device import placement

    want, want_status = run("general", fn, inputs)
    got, got_status = run("fast", fn, inputs)
    assert got_status == want_status
    assert (got.dtype, got.shape, got.stride(), placement.npu_of(got)) == (
        want.dtype,
        want.shape,
        want.stride(),
        0,
    )
    with plain_torch():
        if got.element_size() == 2:
            assert torch.equal(bits_of(got), bits_of(want))
        else:
            assert torch.equal(got.view(torch.int32), want.view(torch.int32))
    return want, want_status
