"""bf16 operations the fast path leaves to torch's own bf16 kernels on a 910B in INF/NAN mode
(``torch_npu._fp16.bf16_torch_kernels``) give the general path's bits: every bf16 value against
other values and the special ones (NaN, inf, the largest bf16, subnormals, signed zeros), same
shapes and both broadcasts, the scalar tail of torch's vector loops, views. The operations it
leaves out (a Python number added, ``alpha`` 2, a 0-dim fp32 operand, transcendental functions,
and on torch 1.x a Python number multiplied) take the round trip, with the same bits; in
saturation mode every one of them does."""

import math

import pytest
import torch

from overlay_support import select_kernel_path, use_overlay
from overlay_support.both_paths import both_paths, every_bf16
from overlay_support.emulation_off import plain_torch

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch_npu._fp16 import bf16_torch_kernels, float_status  # noqa: E402
from overlay_support.npu_op_checks import emulated_chip  # noqa: E402

aten = torch.ops.aten
BF16 = torch.bfloat16
TORCH2 = int(torch.__version__.split(".")[0]) >= 2
MODES = {"inf_nan": True, "saturation": False}
SPECIALS = [math.nan, math.inf, 3.3895e38, -3.3895e38, -math.inf, 1e-40, -1e-40, 0.0, -0.0, 1.0]


@pytest.fixture(params=sorted(MODES))
def mode(request, monkeypatch):
    """A 910B in the parameter's mode with the runtime's kernels; the float status clear."""
    select_kernel_path("runtime", monkeypatch, RUNTIME_DIR)
    with emulated_chip("Ascend910B1", inf_nan=MODES[request.param]):
        float_status.clear()
        yield request.param
        float_status.clear()


@pytest.fixture
def taken(monkeypatch):
    """The operations torch's bf16 kernels computed, in order."""
    seen = []
    run = bf16_torch_kernels.run

    def spy(func, args, kwargs, rt):
        out = run(func, args, kwargs, rt)
        if out is not bf16_torch_kernels.NOT_HANDLED:
            seen.append(func)
        return out

    monkeypatch.setattr(bf16_torch_kernels, "run", spy)
    return seen


def others(every):
    """Second operands for ``every``: itself shifted (every value meets many others) and each
    special value at every position."""
    with plain_torch():
        found = [every.roll(12345), every.flip(0)]
        found += [torch.full_like(every, v) for v in SPECIALS]
        return found


def same_on_both_paths(fn, *inputs):
    """``both_paths``, for a bf16 result."""
    assert both_paths(fn, *inputs)[0].dtype == BF16


def mask_like(x, seed=0):
    with plain_torch():
        return torch.rand(x.shape, generator=torch.Generator().manual_seed(seed)) > 0.5


UNARY = {"neg": torch.neg, "abs": torch.abs, "relu": torch.relu}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}


@pytest.mark.parametrize("offset", [0, 1, 7])
def test_elementwise_ops_give_the_general_paths_bits(mode, taken, offset):
    """Every bf16 value through each operation; an offset puts values in torch's scalar tail."""
    every = every_bf16()[offset:]
    for name, fn in UNARY.items():
        same_on_both_paths(fn, every)
    for b in others(every_bf16())[:6]:  # shifted, flipped, NaN, inf, the largest, -largest
        b = b[offset:]
        for name, fn in BINARY.items():
            same_on_both_paths(fn, every, b)
            same_on_both_paths(fn, b, every)
        same_on_both_paths(lambda a, c, m: torch.where(m, a, c), every, b, mask_like(every))
    for value in (-1e9, -math.inf, 0.1, 7):
        same_on_both_paths(lambda a, m, v=value: a.masked_fill(m, v), every, mask_like(every, 1))
    # Sums of one shape are the runtime's one-pass add_bf16 (bf16_kernels), not torch's.
    count = len(UNARY) + 6 * (2 * (len(BINARY) - 1) + 1) + 4
    assert len(taken) == (count if mode == "inf_nan" else 0)


def test_broadcasts_views_and_copies_give_the_general_paths_bits(mode, taken):
    every = every_bf16()
    with plain_torch():
        square = every.view(256, 256)
        row, column = every.roll(999)[:256], every.flip(0)[:256].view(256, 1)
    for fn in BINARY.values():
        for a, b in ((square, row), (row, square), (square, column), (column, square)):
            same_on_both_paths(fn, a, b)
    same_on_both_paths(lambda a: a.t().contiguous(), square)  # clone of a view
    for fn in BINARY.values():  # the result's layout follows the transposed operands
        same_on_both_paths(lambda a, b, f=fn: f(a.t(), b.t()), square, square.flip(0))
        same_on_both_paths(lambda a, b, f=fn: f(a.t(), b), square, row)
    same_on_both_paths(lambda a, b: torch.cat([a.t(), b], 1), square, square)
    same_on_both_paths(lambda a, m: a.masked_fill(m, -1e4), square, mask_like(row))
    same_on_both_paths(lambda g, x: aten.threshold_backward(g, x, 0), every, every.roll(5))
    same_on_both_paths(lambda g: aten.select_backward(g, [256, 256], 1, 7), row)
    same_on_both_paths(lambda g: aten.slice_backward(g, [256, 300], 1, 20, 276, 1), square)
    assert len(taken) == (6 * len(BINARY) + 6 if mode == "inf_nan" else 0)


def test_python_numbers_multiply_in_torch_only_where_it_keeps_them_fp32(mode, taken):
    every = every_bf16()
    for number in (0.1, 1 / 3, 3.0, 7, 123.456, -2.5, 1e-3):
        same_on_both_paths(lambda a, n=number: a * n, every)
        same_on_both_paths(lambda a, n=number: a / n, every)
    native = mode == "inf_nan" and TORCH2
    assert len(taken) == (14 if native else 0)


def test_what_torch_rounds_differently_takes_the_round_trip(mode, taken):
    every = every_bf16()
    with plain_torch():
        other = every.roll(777)
        zero_dim = torch.tensor(0.1)
    same_on_both_paths(lambda a: a + 0.1, every)  # torch rounds the number to bf16 first
    same_on_both_paths(lambda a: a - 1 / 3, every)
    same_on_both_paths(lambda a, b: torch.add(a, b, alpha=2), every, other)
    same_on_both_paths(lambda a, z: a * z, every, zero_dim)
    same_on_both_paths(torch.exp, every)
    same_on_both_paths(torch.nn.functional.silu, every)
    same_on_both_paths(torch.rsqrt, every)
    assert taken == []


def test_picks_by_index_give_the_general_paths_bits(mode, taken):
    every = every_bf16()
    with plain_torch():
        table = every.view(256, 256)
        g = torch.Generator().manual_seed(3)
        rows = torch.randint(0, 256, (4, 33), generator=g)
        columns = torch.randint(0, 256, (256, 17), generator=g)
    same_on_both_paths(lambda t, i: torch.nn.functional.embedding(i, t), table, rows)
    same_on_both_paths(lambda t, i: torch.index_select(t, 0, i), table, rows[0])
    same_on_both_paths(lambda t, i: torch.index_select(t, 1, i), table, rows[1])
    same_on_both_paths(lambda t, i: torch.gather(t, 1, i), table, columns)
    assert len(taken) == (4 if mode == "inf_nan" else 0)
