"""fp16 ``mul`` and ``add`` of two tensors, one broadcast along the other (rotary's q * cos,
RMSNorm's weight * x, a per-row factor) or both of one shape, and ``neg``, on the fast path:
the runtime's one-pass kernels (``half_kernels``, ``broadcast_layout``) must give the general
path's bits, float status, dtype, sizes, strides and NPU placement, exactly. The layouts the
kernels take and those they leave to the round trip are both checked, with NaN, inf, +-65504
and its neighbours, subnormals and sizes that are no multiple of a vector width."""

import math

import pytest
import torch

from overlay_support import use_overlay
from overlay_support.both_paths import on_path
from overlay_support.emulation_off import plain_torch

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch_npu import _runtime  # noqa: E402
from torch_npu._device import placement  # noqa: E402
from torch_npu._fp16 import float_status, half_kernels  # noqa: E402

aten = torch.ops.aten
pytestmark = pytest.mark.usefixtures("kernel_path")  # conftest.py: each case both ways

SPECIALS = [math.inf, -math.inf, math.nan, 65504.0, -65504.0, 65472.0, 6e-8, -6e-8, -0.0, 256.0]


def values(*shape, seed=0, scale=1.0, specials=False):
    """Random fp16 values; ``specials`` puts SPECIALS at the first positions."""
    with plain_torch():
        g = torch.Generator().manual_seed(seed)
        x = (torch.randn(shape, generator=g) * scale).half()
        if specials:
            flat = x.view(-1)
            for i, v in enumerate(SPECIALS[: flat.numel()]):
                flat[i] = v
    return x


def same(a, b):
    """Exact equality of two results: dtype, sizes, strides, NPU placement and bits."""
    if (a.dtype, a.shape, a.stride(), placement.npu_of(a)) != (
        b.dtype,
        b.shape,
        b.stride(),
        placement.npu_of(b),
    ):
        return False
    with plain_torch():
        return torch.equal(a.view(torch.int16), b.view(torch.int16))


def assert_paths_agree(fn, make):
    """The fast path's result and float status are the general path's (the fast path twice:
    the second run meets its caches)."""
    want, want_status = on_path("general", fn, make())
    for _ in range(2):
        got, status = on_path("fast", fn, make())
        assert status == want_status, f"float status: fast {status}, general {want_status}"
        assert same(got, want), (got, want)
    return want, want_status


def q_like(b, h, t, d, seed=0, **kw):
    """(b, h, t, d) laid out as (b, t, h, d): q of attention after its transpose."""
    return values(b, t, h, d, seed=seed, **kw).transpose(1, 2)


def grad_like(b, h, t, d, seed=0, **kw):
    """(b, h, t, d) laid out as (b, h, d, t): a gradient from a transposed matmul."""
    return values(b, h, d, t, seed=seed, **kw).transpose(2, 3)


# name: (function, inputs, whether the runtime's kernels take it)
CASES = {
    # same shape
    "mul_same_shape": (
        torch.mul,
        lambda: [values(5, 37, specials=True), values(5, 37, seed=1)],
        True,
    ),
    "mul_overflow": (
        torch.mul,
        lambda: [values(67, scale=0) + 300, values(67, scale=0) + 300],
        True,
    ),
    "mul_to_65504": (
        torch.mul,
        lambda: [values(2, 9, scale=0) + 255.875, values(2, 9, scale=0) + 256],  # 65504 exactly
        True,
    ),
    "mul_subnormals": (
        torch.mul,
        lambda: [values(3, 33, scale=1e-3, specials=True), values(3, 33, seed=1, scale=1e-3)],
        True,
    ),
    "mul_both_transposed": (
        lambda a, b: a.t() * b.t(),
        lambda: [values(9, 7, specials=True), values(9, 7, seed=1)],
        True,
    ),
    "mul_slice_by_contiguous": (  # the second is read flat, the slice through its strides
        lambda a, b: a[:, ::2] * b,
        lambda: [values(6, 22, specials=True), values(6, 11, seed=1)],
        True,
    ),
    "mul_contiguous_by_transposed": (
        lambda a, b: a * b.t(),
        lambda: [values(6, 11, specials=True), values(11, 6, seed=1)],
        True,
    ),
    "mul_transposed_by_contiguous": (  # the result is laid out as the first operand
        lambda a, b: a.t() * b,
        lambda: [values(11, 6, specials=True), values(6, 11, seed=1)],
        True,
    ),
    # RMSNorm
    "mul_weight_by_rows": (
        torch.mul,
        lambda: [values(64, specials=True), values(2, 13, 64, seed=1, scale=100)],
        True,
    ),
    "mul_rows_by_weight": (
        torch.mul,
        lambda: [values(2, 13, 64, scale=100, specials=True), values(64, seed=1)],
        True,
    ),
    "mul_by_per_row_factor": (
        torch.mul,
        lambda: [values(3, 7, 19, specials=True), values(3, 7, 1, seed=1, scale=300)],
        True,
    ),
    "mul_per_row_factor_first": (
        torch.mul,
        lambda: [values(3, 7, 1, seed=1, scale=300, specials=True), values(3, 7, 19)],
        True,
    ),
    # rotary
    "mul_q_by_cos": (
        torch.mul,
        lambda: [values(2, 4, 9, 16, specials=True), values(9, 16, seed=1)],
        True,
    ),
    "mul_transposed_q_by_cos": (
        torch.mul,
        lambda: [q_like(2, 4, 9, 16, specials=True), values(9, 16, seed=1)],
        True,
    ),
    "mul_cos_by_transposed_q": (
        torch.mul,
        lambda: [values(9, 16, seed=1, specials=True), q_like(2, 4, 9, 16)],
        True,
    ),
    "mul_gradient_by_cos": (
        torch.mul,
        lambda: [grad_like(2, 3, 9, 16, specials=True), values(9, 16, seed=1)],
        True,
    ),
    "mul_cos_by_gradient": (  # cos comes first and orders t and d unlike the gradient
        torch.mul,
        lambda: [values(9, 16, seed=1, specials=True), grad_like(2, 3, 9, 16)],
        False,
    ),
    "mul_transposed_cos_first": (
        torch.mul,
        lambda: [values(16, 9, seed=1, specials=True).t(), values(2, 4, 9, 16)],
        False,
    ),
    "mul_transposed_cos_second": (
        torch.mul,
        lambda: [values(2, 4, 9, 16, specials=True), values(16, 9, seed=1).t()],
        True,
    ),
    # other broadcasts and shapes
    "mul_0dim": (torch.mul, lambda: [values(seed=3, scale=1e3), values(5, 7, specials=True)], True),
    "mul_both_0dim": (torch.mul, lambda: [values(scale=300), values(seed=1, scale=300)], True),
    "mul_size_one_dims": (
        torch.mul,
        lambda: [values(1, 4, 1, 17, specials=True), values(17, seed=1)],
        True,
    ),
    "mul_strided_size_one_dims": (  # non-contiguous with a size-1 dimension: the round trip
        torch.mul,
        lambda: [values(5, 1, 6, specials=True).transpose(0, 2), values(5, seed=1)],
        False,
    ),
    "mul_expanded_first": (  # an expanded operand is no flat range: read through strides
        lambda a, b: a.expand(4, 5, 6) * b,
        lambda: [values(5, 6, specials=True), values(4, 5, 6, seed=1)],
        True,
    ),
    "mul_broadcast_both_ways": (
        torch.mul,
        lambda: [values(4, 1, specials=True), values(1, 5, seed=1)],
        False,
    ),
    "mul_more_dims_of_size_one": (
        torch.mul,
        lambda: [values(1, 1, 6, specials=True), values(6, seed=1)],
        True,
    ),
    "mul_fp16_by_fp32": (
        torch.mul,
        lambda: [values(4, 6, specials=True), values(6, seed=1).float()],
        False,
    ),
    "add_bias": (
        torch.add,
        lambda: [values(7, 33, scale=3e4, specials=True), values(33, seed=1, scale=3e4)],
        True,
    ),
    "add_to_bias": (
        torch.add,
        lambda: [values(33, seed=1, scale=3e4, specials=True), values(7, 33, scale=3e4)],
        True,
    ),
    "add_just_above_max": (  # 65504 + 8: IEEE rounds it to 65504, the NPU saturates
        torch.add,
        lambda: [values(5, 3, scale=0) + 65504, values(3, scale=0) + 8],
        True,
    ),
    "add_alpha_broadcast": (
        lambda a, b: torch.add(a, b, alpha=2),
        lambda: [values(7, 9, specials=True), values(9, seed=1)],
        False,
    ),
    "add_transposed": (
        torch.add,
        lambda: [q_like(2, 3, 5, 8, specials=True), q_like(2, 3, 5, 8, seed=1)],
        True,
    ),
    # neg: exact, then stored saturating
    "neg": (torch.neg, lambda: [values(5, 37, specials=True)], True),
    "neg_half_of_rows": (  # rotary's rotate_half: no flat range
        lambda a: -a.chunk(2, dim=-1)[1],
        lambda: [q_like(2, 4, 9, 16, specials=True)],
        True,
    ),
    "neg_transposed": (lambda a: -a.t(), lambda: [values(9, 7, specials=True)], True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_gives_the_general_path_bits_and_status(name):
    fn, make, _ = CASES[name]
    assert_paths_agree(fn, make)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_runtime_kernels_take_the_layouts_they_should(name, kernel_path):
    """So that the agreement above is the kernels', not the round trip's."""
    rt = _runtime.runtime_kernels()
    if kernel_path != "runtime" or rt is None:
        pytest.skip("the runtime's kernels are off on this kernel path")
    fn, make, taken = CASES[name]
    calls = []

    def record(func, types, args=(), kwargs=None):
        if func in (aten.mul.Tensor, aten.add.Tensor, aten.neg.default):
            done = half_kernels.run(func, args, kwargs or {}, rt)
            calls.append(done is not half_kernels.NOT_HANDLED)
            if done is not half_kernels.NOT_HANDLED:
                return done
        return func(*args, **(kwargs or {}))

    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return record(func, types, args, kwargs)

    inputs = make()
    with plain_torch(), Recorder():
        fn(*inputs)
    float_status.clear()
    assert calls == [taken]


def every_fp16_value():
    with plain_torch():
        return torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(torch.float16)


@pytest.mark.parametrize("op", [torch.mul, torch.add])
def test_every_fp16_value_with_every_special_agrees(op):
    """Every fp16 value (a 256 x 256 tensor) with a row of specials and random values broadcast
    along it, either way round, and with one value; each lands in the vector body and the tail
    of the kernels' tiles."""

    def row():
        with plain_torch():
            r = values(256, seed=5, scale=100)
            r[: len(SPECIALS)] = torch.tensor(SPECIALS, dtype=torch.float16)
            return r

    assert_paths_agree(op, lambda: [every_fp16_value().view(256, 256), row()])
    assert_paths_agree(op, lambda: [row().view(256, 1), every_fp16_value().view(256, 256)])
    for v in SPECIALS:

        def make(v=v):
            with plain_torch():
                return [every_fp16_value()[3:], torch.tensor(v, dtype=torch.float16)]

        assert_paths_agree(op, make)


def test_npu_results_are_contiguous_and_placed_on_both_paths():
    """On an NPU the result is made contiguous and put on the inputs' NPU, whatever layout the
    kernel wrote."""

    def make():
        return [
            placement.put(q_like(2, 4, 9, 16, specials=True), 0),
            placement.put(values(9, 16), 0),
        ]

    out, _ = assert_paths_agree(torch.mul, make)
    assert out.is_contiguous() and placement.npu_of(out) == 0
    out, _ = assert_paths_agree(lambda a: -a.chunk(2, dim=-1)[0], lambda: make()[:1])
    assert out.is_contiguous() and placement.npu_of(out) == 0


def test_the_corpus_saturates_and_reports():
    """The cases above do reach the saturating store: a sample of them raises the status."""
    for name in ("mul_overflow", "mul_same_shape", "add_just_above_max", "neg", "mul_q_by_cos"):
        fn, make, _ = CASES[name]
        _, status = assert_paths_agree(fn, make)
        assert status, name
    _, status = assert_paths_agree(*CASES["mul_to_65504"][:2])
    assert not status  # 255.875 * 256 is 65504 itself
