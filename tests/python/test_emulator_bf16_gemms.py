"""bf16 matrix products on an emulated 910B in INF/NAN mode run on torch's own bf16 GEMM, on both
emulation paths (``torch_npu._fp16.bf16_gemms``), where that GEMM accumulates in fp32 and rounds
once, as the NPU's cube unit does: each result lies within one bf16 step of the exact product
(positive operands, so no cancellation: an fp32 sum is within 2**-16 of exact, a bf16 sum drifts
several steps, as the reference accumulator below shows), NaNs come out as 0x7FC0, and both paths
give the same bits. Small products, other alphas and betas, saturation mode and oneDNN turned off
keep the round trip (widen, fp32 kernel, round once), bit for bit."""

import pytest
import torch

from overlay_support import select_kernel_path, use_overlay
from overlay_support.both_paths import bits_of, both_paths
from overlay_support.emulation_off import plain_torch

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch_npu._fp16 import bf16_gemms, float_status  # noqa: E402
from overlay_support.npu_op_checks import emulated_chip  # noqa: E402

BF16 = torch.bfloat16
TORCH2 = int(torch.__version__.split(".")[0]) >= 2
NAN_BITS = 0x7FC0
BF16_MAX = 3.3895313892515355e38


@pytest.fixture(params=["runtime", "torch"])
def inf_nan_910b(request, monkeypatch):
    """A 910B in INF/NAN mode, with the runtime's kernels or torch's; the float status clear."""
    select_kernel_path(request.param, monkeypatch, RUNTIME_DIR)
    with emulated_chip("Ascend910B1", inf_nan=True):
        float_status.clear()
        yield
        float_status.clear()


@pytest.fixture
def taken(monkeypatch):
    """The operations torch's bf16 GEMM computed, in order."""
    seen = []
    run = bf16_gemms.run

    def spy(func, args, kwargs):
        out = run(func, args, kwargs)
        if out is not None:
            seen.append(func)
        return out

    monkeypatch.setattr(bf16_gemms, "run", spy)
    return seen


@pytest.fixture
def fp32_accumulating():
    if not bf16_gemms._fp32_accumulating():
        pytest.skip(
            "torch's bf16 GEMM on this machine is not oneDNN's with an fp32 accumulator, so "
            "the emulator computes every bf16 product by the round trip"
        )


def positive(*shape, seed=0):
    """bf16 values 1 + j/128 (exact in bf16, in [1, 2)) on the host."""
    with plain_torch():
        g = torch.Generator().manual_seed(seed)
        return (1 + torch.randint(0, 128, shape, generator=g).double() / 128).to(BF16)


def exact(fn, *inputs):
    """``fn`` on the inputs in fp64: exact for these products (8-bit significands, at most
    512 terms)."""
    with plain_torch():
        return fn(*(x.double() for x in inputs))


def within_one_step(got, want):
    """Each bf16 result within one bf16 step (2**-7 of its binade) of the exact value."""
    with plain_torch():
        step = torch.exp2(torch.floor(torch.log2(want)) - 7)
        return bool(((got.double() - want).abs() <= step).all())


def bf16_accumulated(a, b):
    """``a @ b`` with a bf16 accumulator, one product added at a time, as torch 1.x's own bf16
    loops compute it: the kind of GEMM the module must not take."""
    with plain_torch():
        acc = torch.zeros(a.shape[0], b.shape[1], dtype=BF16)
        for k in range(a.shape[1]):
            acc = (acc.float() + a[:, k : k + 1].float() * b[k : k + 1, :].float()).to(BF16)
        return acc


def t(x):
    return x.transpose(-2, -1)


# name -> (the product, operand shapes); transposed operands as nn.Linear and its backward
# hand them over.
PRODUCTS = {
    "mm": (torch.mm, [(48, 256), (256, 40)]),
    "mm_weight_transposed": (lambda a, w: torch.mm(a, t(w)), [(48, 256), (40, 256)]),
    "mm_input_transposed": (lambda g, x: torch.mm(t(g), x), [(256, 48), (256, 40)]),
    "bmm": (torch.bmm, [(4, 32, 128), (4, 128, 32)]),
    "bmm_key_transposed": (lambda q, k: torch.bmm(q, t(k)), [(4, 32, 128), (4, 32, 128)]),
    "addmm": (lambda bias, a, w: torch.addmm(bias, a, t(w)), [(40,), (48, 256), (40, 256)]),
    "linear": (torch.nn.functional.linear, [(48, 256), (40, 256), (40,)]),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_accumulate_in_fp32_and_round_once(name, inf_nan_910b, taken, fp32_accumulating):
    fn, shapes = PRODUCTS[name]
    inputs = [positive(*shape, seed=i) for i, shape in enumerate(shapes)]
    got, status = both_paths(fn, *inputs)
    assert taken and set(taken) <= bf16_gemms.OPS
    assert not status
    assert within_one_step(got.cpu(), exact(fn, *inputs))


def test_a_bf16_accumulator_would_fail_the_bound():
    """The bound is not loose: summing the same mm's products in bf16 misses it."""
    a, b = positive(48, 256, seed=0), positive(256, 40, seed=1)
    assert not within_one_step(bf16_accumulated(a, b), exact(torch.mm, a, b))


def test_nans_come_out_as_one_pattern(inf_nan_910b, taken, fp32_accumulating):
    a, b = positive(48, 256, seed=0), positive(256, 40, seed=1)
    with plain_torch():
        a[3, 7] = float("nan")
        a[5, 9] = float("inf")
        b[9, :] = 0  # inf * 0: a NaN made by the product
        a.view(torch.int16)[11, 0] = -1  # 0xFFFF, another NaN's bits
    got, _ = both_paths(torch.mm, a, b)
    assert taken == [torch.ops.aten.mm.default] * 2  # once on each path
    with plain_torch():
        nan = torch.isnan(got.cpu())
        assert nan[3].all() and nan[5].all() and nan[11].all() and int(nan.sum()) == 3 * 40
        assert bool((bits_of(got.cpu())[nan] == NAN_BITS).all())


def round_trip(fn, *inputs):
    """The round trip's result: fp32 values of the bf16 operands, fp32 kernel, rounded once."""
    with plain_torch():
        return fn(*(x.float() for x in inputs)).to(BF16)


def same_as_round_trip(fn, *inputs):
    got, status = both_paths(fn, *inputs)
    with plain_torch():
        assert torch.equal(bits_of(got.cpu()), bits_of(round_trip(fn, *inputs)))
    return status


def test_small_products_keep_the_round_trip(inf_nan_910b, taken):
    a, b = positive(16, 64, seed=0), positive(64, 31, seed=1)  # 31744 multiply-adds
    assert 16 * 64 * 31 < bf16_gemms.MIN_MULTIPLY_ADDS
    same_as_round_trip(torch.mm, a, b)
    assert taken == []


def test_other_alphas_and_betas_keep_the_round_trip(inf_nan_910b, taken):
    bias, a, b = positive(40, seed=0), positive(48, 256, seed=1), positive(256, 40, seed=2)
    same_as_round_trip(lambda c, x, y: torch.addmm(c, x, y, beta=0.5), bias, a, b)
    same_as_round_trip(lambda c, x, y: torch.addmm(c, x, y, alpha=2), bias, a, b)
    assert taken == []


# torch 2.x's mkldnn.flags warns that oneDNN's TF32 is for Intel GPUs.
ONEDNN_FLAGS_WARNING = "ignore:TF32 acceleration on top of oneDNN"


@pytest.mark.filterwarnings(ONEDNN_FLAGS_WARNING)
def test_oneDNN_turned_off_keeps_the_round_trip(inf_nan_910b, taken):
    a, b = positive(48, 256, seed=0), positive(256, 40, seed=1)
    with torch.backends.mkldnn.flags(enabled=False):
        same_as_round_trip(torch.mm, a, b)
    assert taken == []


def test_saturation_mode_keeps_the_round_trip(monkeypatch, taken):
    """In saturation mode the round trip's store clamps an overflow to the largest bf16 and
    reports it."""
    select_kernel_path("runtime", monkeypatch, RUNTIME_DIR)
    with emulated_chip("Ascend910B1", inf_nan=False):
        a, b = positive(48, 256, seed=0), positive(256, 40, seed=1)
        with plain_torch():
            big_a, big_b = a * 2.0**120, b * 2.0**120  # products of 2**240: beyond fp32
        status = same_as_round_trip(torch.mm, a, b)
        assert not status
        got, status = both_paths(torch.mm, big_a, big_b)
        assert status
        with plain_torch():
            assert bool((got.cpu().float() == BF16_MAX).all())
    assert taken == []


@pytest.mark.filterwarnings(ONEDNN_FLAGS_WARNING)
def test_the_probe_rejects_torch_1x_bf16_loops():
    """Without oneDNN, torch 1.x's bf16 GEMM sums in bf16 and the probe fails; torch 2.x's own
    loops sum in fp32 and it passes (they are refused for their speed: oneDNN off is checked at
    every call)."""
    with plain_torch(), torch.backends.mkldnn.flags(enabled=False):
        assert bf16_gemms._probe_passes() is TORCH2


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (torch.mm, [(256,), (256, 40)]),
        (torch.bmm, [(48, 256), (256, 40)]),
        (torch.mm, [(48, 256), (255, 40)]),
    ],
    ids=["mm_of_a_vector", "bmm_of_matrices", "mm_of_mismatched_sizes"],
)
def test_calls_torch_refuses_get_its_error(fn, shapes, inf_nan_910b, fp32_accumulating):
    inputs = [positive(*shape, seed=i) for i, shape in enumerate(shapes)]
    with plain_torch(), pytest.raises(RuntimeError) as on_host:
        fn(*inputs)
    with pytest.raises(RuntimeError) as on_npu:
        fn(*(x.npu() for x in inputs))
    assert str(on_npu.value) == str(on_host.value)
