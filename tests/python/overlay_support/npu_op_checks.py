"""Checks shared by the tests of the emulated NPU's torch_npu operators (test_npu_op_*.py).

Each operator runs on ``npu:0`` and is compared with its formula written in plain torch on the
host in fp32, forward and backward:
- fp32 inputs: equal to the formula within ``FP32`` (rtol 1e-5, atol 1e-5: the operator and the
  formula may sum in a different order);
- fp16 inputs: the operator computes in fp32 and rounds once, so it equals the formula computed
  in fp32 on the same (fp16-rounded) inputs and rounded to fp16, within ``FP16`` (rtol 2e-3,
  atol 2e-3: two fp32 values a few ulp apart may round to neighbouring fp16 values, 2^-10
  apart). Gradients of fp16 inputs are fp16 and compared the same way;
- an overflowing fp16 case: the result saturates to ±65504 and sets the float status (read with
  ``torch_npu.npu.utils.npu_check_overflow``), and in INF/NAN mode it is inf.

The emulator is imported from the source tree (``overlay_support.SRC_DIR``), without apex.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Callable, Iterator, List, Optional, Sequence

import torch

from . import SRC_DIR

if SRC_DIR not in sys.path:
    sys.path.insert(0, SRC_DIR)

import torch_npu  # noqa: E402
from torch_npu._device import soc  # noqa: E402
from torch_npu._fp16 import float_status, overflow_mode  # noqa: E402

FP16_MAX = 65504.0
FP32 = dict(rtol=1e-5, atol=1e-5)
FP16 = dict(rtol=2e-3, atol=2e-3)
DTYPES = (torch.float32, torch.float16)


def tolerance(dtype: torch.dtype) -> dict:
    return FP16 if dtype == torch.float16 else FP32


def randn(*shape, seed: int = 0, scale: float = 1.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale


def on_npu(t: torch.Tensor, dtype: Optional[torch.dtype] = None, grad: bool = False):
    t = t.to(dtype) if dtype is not None and t.is_floating_point() else t
    t = t.detach().clone().npu()
    return t.requires_grad_(grad) if grad else t


def assert_close(got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype, what: str) -> None:
    """``got`` (from the NPU, of ``dtype``) against the fp32 formula ``want`` rounded to
    ``dtype``."""
    assert got.dtype == dtype, f"{what}: dtype {got.dtype}, expected {dtype}"
    assert got.device.type == "npu", f"{what}: on {got.device}, expected the NPU"
    torch.testing.assert_close(
        got.detach().cpu().float(),
        want.detach().to(dtype).float(),
        msg=lambda m: f"{what}: {m}",
        **tolerance(dtype),
    )


def check_against_formula(
    op: Callable,
    formula: Callable,
    inputs: Sequence[torch.Tensor],
    dtype: torch.dtype,
    grads: Sequence[int] = (0,),
    seed: int = 1,
    out_index: Optional[int] = None,
) -> List[torch.Tensor]:
    """``op`` on the NPU copies (of ``dtype``) of the float ``inputs`` against ``formula`` on
    fp32 host copies of the same rounded values: forward, then the gradients of the inputs at
    the positions ``grads`` for a random output gradient. Non-float inputs are passed as they
    are (on the NPU for op). Returns the op's outputs."""
    rounded = [x.to(dtype) if x.is_floating_point() else x for x in inputs]
    npu_in = [on_npu(x, grad=i in grads) for i, x in enumerate(rounded)]
    ref_in = [
        (x.float() if x.is_floating_point() else x).detach().clone().requires_grad_(i in grads)
        for i, x in enumerate(rounded)
    ]
    got = op(*npu_in)
    want = formula(*ref_in)
    if out_index is not None:
        got, want = got[out_index], want[out_index]
    assert_close(got, want, dtype, "forward")
    if grads:
        grad_out = randn(*want.shape, seed=seed).to(dtype)
        got.backward(on_npu(grad_out))
        want.backward(grad_out.float())
        for i in grads:
            assert npu_in[i].grad is not None, f"no gradient for input {i}"
            assert_close(npu_in[i].grad, ref_in[i].grad, dtype, f"gradient of input {i}")
    return [got]


def check_saturation(
    op: Callable, inputs: Sequence[torch.Tensor], out_index: Optional[int] = None
) -> None:
    """fp16 ``op`` on ``inputs`` (fp16 NPU tensors) overflows: saturated to ±65504 with the
    float status set; in INF/NAN mode the overflow is inf and the status is not used."""

    def run():
        out = op(*inputs)
        return out[out_index] if out_index is not None else out

    check_overflow(run)


def check_grad_saturation(
    op: Callable, x: torch.Tensor, grad_value: float = 65000.0, out_index: Optional[int] = None
) -> None:
    """The fp16 gradient ``op`` gives its fp16 input ``x`` (values where the derivative exceeds
    1) for an upstream gradient of ``grad_value`` overflows: saturated, status set."""

    def run():
        leaf = x.detach().clone().requires_grad_()
        out = op(leaf)
        out = out[out_index] if out_index is not None else out
        out.backward(torch.full_like(out, grad_value))
        return leaf.grad

    check_overflow(run)


def check_overflow(run: Callable[[], torch.Tensor]) -> None:
    """``run()`` gives an fp16 result that overflows: saturation mode stores ±65504 and sets the
    float status (``npu_check_overflow`` reads and clears it); INF/NAN mode gives inf."""
    float_status.clear()
    assert not torch_npu.npu.utils.npu_check_overflow(0.0)
    out = run()
    assert out.dtype == torch.float16
    values = out.detach().cpu().float()
    assert torch.isfinite(values).all(), "saturation mode stores no inf"
    assert values.abs().max().item() == FP16_MAX, "the overflow saturates to 65504"
    assert torch_npu.npu.utils.npu_check_overflow(0.0), "the float status records the overflow"
    assert not torch_npu.npu.utils.npu_check_overflow(0.0), "npu_check_overflow clears it"
    previous = overflow_mode.select(True)
    try:
        out = run()
        assert torch.isinf(out.detach().cpu().float()).any(), "INF/NAN mode overflows to inf"
        assert not float_status.get(), "INF/NAN mode leaves the float status alone"
    finally:
        overflow_mode.select(previous)
        float_status.clear()


def check_no_derivative(
    name: str, leaf: torch.Tensor, output_of: Callable[[torch.Tensor], torch.Tensor]
) -> None:
    """What torch's autograd fallback makes of operator ``name``, which torch_npu gives no
    autograd kernel: in mode "warn" (torch 2.x's default) a backward through ``output_of(leaf)``
    warns, naming ``npu::<name>``, and leaves ``leaf.grad`` None; in mode "nothing" (torch 1.x
    falls through) the output does not require grad."""
    from torch_npu._ops._no_derivative import fallback_mode

    assert leaf.requires_grad
    out = output_of(leaf)
    if fallback_mode() != "warn":
        assert not out.requires_grad, f"{name}'s result must not require grad"
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out.sum().backward()
    wanted = f"npu::{name}: an autograd kernel was not registered"
    assert any(wanted in str(w.message) for w in caught), [str(w.message) for w in caught]
    assert leaf.grad is None, f"{name} gives its input no gradient"


@contextlib.contextmanager
def emulated_chip(name: str, inf_nan: bool) -> Iterator[None]:
    """The emulator as the chip ``name`` in INF/NAN (or saturation) mode, whatever the
    environment says; the previous chip and mode after. The mode is chosen first: the previous
    mode is the chip's."""
    previous_mode = overflow_mode.select(inf_nan)
    previous_chip = soc.select(name)
    try:
        yield
    finally:
        soc.select(previous_chip)
        overflow_mode.select(previous_mode)


def reset_status() -> None:
    float_status.clear()


__all__ = [
    "check_no_derivative",
    "FP16",
    "FP16_MAX",
    "FP32",
    "DTYPES",
    "assert_close",
    "check_against_formula",
    "check_saturation",
    "check_grad_saturation",
    "check_overflow",
    "emulated_chip",
    "on_npu",
    "randn",
    "reset_status",
    "tolerance",
    "torch_npu",
    "float_status",
    "overflow_mode",
]
