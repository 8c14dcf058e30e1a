"""``torch.npu.amp`` on the emulated NPU: autocast with torch's CUDA op policy and GradScaler
with the NPU's overflow detection (the float status), against computations written out by hand
(the emulation is deterministic, so they agree bit for bit); where the state lives (torch's),
bfloat16 autocast on a 910B and its refusal on a 910, and torch_npu's GradScaler differences."""

import copy
import pickle

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import overlay_support
from overlay_support import use_overlay

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch_npu._fp16 import float_status, overflow_mode  # noqa: E402
from torch.npu.amp import GradScaler, autocast, custom_bwd, custom_fwd  # noqa: E402


pytestmark = pytest.mark.usefixtures("kernel_path")  # conftest.py: each test both ways
TORCH2 = hasattr(torch, "get_autocast_dtype")  # autocast state per device type


def npu(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to("npu", dtype)


# --- autocast ----------------------------------------------------------------------------------

POLICY_CASES = {
    # name: (call, inputs, the dtype torch's CUDA policy gives, the same computation by hand)
    "linear": (
        lambda x, w, b: F.linear(x, w, b),
        [(4, 6), (3, 6), (3,)],
        torch.float16,
        lambda x, w, b: F.linear(x.half(), w.half(), b.half()),
    ),
    "matmul@": (
        lambda a, b: a @ b,
        [(4, 5), (5, 3)],
        torch.float16,
        lambda a, b: a.half() @ b.half(),
    ),
    "conv2d": (
        lambda x, w: F.conv2d(x, w),
        [(1, 2, 5, 5), (3, 2, 3, 3)],
        torch.float16,
        lambda x, w: F.conv2d(x.half(), w.half()),
    ),
    "bmm": (
        torch.bmm,
        [(2, 3, 4), (2, 4, 5)],
        torch.float16,
        lambda a, b: torch.bmm(a.half(), b.half()),
    ),
    "softmax": (
        lambda x: F.softmax(x, 1),
        [(3, 7)],
        torch.float32,
        lambda x: F.softmax(x, 1, dtype=torch.float32),
    ),
    "log_softmax": (
        lambda x: x.log_softmax(1),
        [(3, 7)],
        torch.float32,
        lambda x: x.log_softmax(1, dtype=torch.float32),
    ),
    "sum": (lambda x: x.sum(), [(3, 7)], torch.float32, lambda x: x.sum(dtype=torch.float32)),
    "exp": (torch.exp, [(3, 7)], torch.float32, lambda x: torch.exp(x.float())),
    "pow": (lambda x: x**2, [(3, 7)], torch.float32, lambda x: x.float() ** 2),
    "layer_norm": (
        lambda x: F.layer_norm(x, (7,)),
        [(3, 7)],
        torch.float32,
        lambda x: F.layer_norm(x.float(), (7,)),
    ),
    "mse_loss": (
        F.mse_loss,
        [(3, 7), (3, 7)],
        torch.float32,
        lambda a, b: F.mse_loss(a.float(), b.float()),
    ),
    "cross_entropy": (
        lambda x: F.cross_entropy(x, torch.tensor([0, 3, 6]).npu()),
        [(3, 7)],
        torch.float32,
        lambda x: F.cross_entropy(x.float(), torch.tensor([0, 3, 6]).npu()),
    ),
    "addcmul": (
        torch.addcmul,
        [(3, 4), (3, 4), (3, 4)],
        None,
        lambda a, b, c: torch.addcmul(a.float(), b.float(), c.float()),
    ),
    "relu": (torch.relu, [(3, 4)], None, torch.relu),  # not in the policy: input dtype
}


@pytest.mark.parametrize("name", sorted(POLICY_CASES))
@pytest.mark.parametrize("input_dtype", [torch.float32, torch.float16])
def test_each_policy_list_gives_torchs_dtype_and_the_same_bits(name, input_dtype):
    call, shapes, want_dtype, by_hand = POLICY_CASES[name]
    inputs = [npu(*s, seed=i, dtype=input_dtype) for i, s in enumerate(shapes)]
    if name == "addcmul":
        inputs[1] = inputs[1].float()  # promote: the widest input wins
    with autocast():
        got = call(*inputs)
    want = by_hand(*inputs)
    expected_dtype = want_dtype or (torch.float32 if name == "addcmul" else input_dtype)
    assert got.dtype == expected_dtype and got.is_npu
    assert torch.equal(got, want.to(expected_dtype))


def test_only_npu_floating_tensors_are_cast_and_double_is_left_alone():
    with autocast():
        assert (
            torch.ones(2, 2, dtype=torch.float64).npu()
            @ torch.ones(2, 2, dtype=torch.float64).npu()
        ).dtype == torch.float64
        assert torch.ones(2, dtype=torch.int64).npu().sum().dtype == torch.int64


def test_gradients_reach_fp32_parameters_in_fp32():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2)).npu()
    with autocast():
        out = model(npu(4, 6))
        loss = F.mse_loss(out, torch.zeros(4, 2).npu())
    assert out.dtype == torch.float16 and loss.dtype == torch.float32
    loss.backward()
    for p in model.parameters():
        assert p.grad.dtype == torch.float32 and p.grad.is_npu


def cast_node(out):
    """The autograd node of the cast of the weight that ``out = x @ w`` used."""
    return out.grad_fn.next_functions[1][0]


def test_a_weight_is_cast_once_per_region_and_the_cache_ends_with_it():
    w = nn.Parameter(npu(4, 4))
    x = npu(2, 4)
    with autocast():
        first, second = x @ w, x @ w
        with autocast():  # nested regions share the outermost one's cache
            nested = x @ w
    assert cast_node(first) is cast_node(second) is cast_node(nested)
    assert cast_node(first).next_functions[0][0].variable is w
    with autocast():
        again = x @ w
    assert cast_node(again) is not cast_node(first)  # a new region casts anew
    with autocast(cache_enabled=False):
        a, b = x @ w, x @ w
    assert cast_node(a) is not cast_node(b)
    with autocast():
        activations = npu(4, 4).requires_grad_() * 1.0  # not a leaf: never cached
        p, q = x @ activations, x @ activations
    assert cast_node(p) is not cast_node(q)


def test_enabled_false_inside_and_decorator_use():
    a, b = npu(3, 3), npu(3, 3, seed=1)
    with autocast():
        assert (a @ b).dtype == torch.float16
        assert torch.npu.amp.is_autocast_enabled()
        with autocast(enabled=False):
            assert (a @ b).dtype == torch.float32 and not torch.npu.amp.is_autocast_enabled()
        assert (a @ b).dtype == torch.float16
    assert (a @ b).dtype == torch.float32 and not torch.npu.amp.is_autocast_enabled()

    @autocast()
    def decorated(x, y):
        return x @ y

    assert decorated(a, b).dtype == torch.float16
    with torch.autocast("npu"):
        assert (a @ b).dtype == torch.float16
    with torch.autocast("cpu", dtype=torch.bfloat16):  # torch's own, untouched
        assert torch.mm(a.cpu(), b.cpu()).dtype == torch.bfloat16


def test_banned_binary_cross_entropy_and_bad_dtypes():
    p = torch.sigmoid(npu(3))
    with autocast():
        with pytest.raises(RuntimeError, match="binary_cross_entropy_with_logits"):
            F.binary_cross_entropy(p, torch.ones(3).npu())
        assert (
            F.binary_cross_entropy_with_logits(npu(3), torch.ones(3).npu()).dtype == torch.float32
        )


def test_the_state_is_torchs_own():
    """Inside the NPU's region torch itself answers that autocast is on (torch 2.x: for "npu";
    torch 1.x: in the GPU's slot, as torch_npu 1.x), and libraries' own regions (``custom_fwd``,
    a block they turn autocast off in) meet the same state."""
    a, b = npu(3, 3), npu(3, 3, seed=1)
    region = autocast()
    assert region._enabled and region.fast_dtype == torch.float16 and region.device == "npu"
    assert not autocast(False)._enabled
    torch_state = (
        (lambda: torch.is_autocast_enabled("npu")) if TORCH2 else torch.is_autocast_enabled
    )
    torch_dtype = (
        (lambda: torch.get_autocast_dtype("npu")) if TORCH2 else torch.get_autocast_gpu_dtype
    )
    assert not torch_state()
    with region:
        assert torch_state() and torch.npu.is_autocast_enabled()
        assert torch_dtype() is torch.float16 is torch.npu.get_autocast_dtype()
        if TORCH2:  # a library's block written for the tensors' device type
            with torch.autocast(device_type=a.device.type, enabled=False):
                assert (a @ b).dtype == torch.float32 and not torch_state()
        else:  # torch 1.x's CUDA autocast shares the GPU slot with the NPU's
            with torch.cuda.amp.autocast(enabled=False):
                assert (a @ b).dtype == torch.float32 and not torch_state()
        assert (a @ b).dtype == torch.float16 and torch_state()
    assert not torch_state() and (a @ b).dtype == torch.float32
    # torch's own class takes "npu" (torch 1.x's through the emulator's torch.autocast)
    with torch.amp.autocast("npu") if TORCH2 else torch.autocast("npu"):
        assert (a @ b).dtype == torch.float16


def test_bfloat16_is_refused_on_a_910():
    """The default chip (Ascend910A) computes no bfloat16: torch 2.x's autocast asks
    ``get_amp_supported_dtype``, warns and stays off, as under torch_npu 2.x; torch_npu 1.x
    raises."""
    if torch.npu.is_bf16_supported():
        pytest.skip("APEXNPU_SOC_VERSION names a chip with bfloat16")
    assert torch.npu.get_amp_supported_dtype() == [torch.float16, torch.float32]
    a, b = npu(3, 3), npu(3, 3, seed=1)
    if TORCH2:
        for make in (
            lambda: autocast(dtype=torch.bfloat16),
            lambda: torch.autocast("npu", dtype=torch.bfloat16),
        ):
            with pytest.warns(UserWarning, match="target dtype is not supported"):
                region = make()
            with region:
                assert (a @ b).dtype == torch.float32
    else:
        with pytest.raises(RuntimeError, match="does not support bfloat16"):
            autocast(dtype=torch.bfloat16)


seen = {}  # what the Functions below saw, by name


class Scale(torch.autograd.Function):
    @staticmethod
    @custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        seen["scale"] = (torch.npu.amp.is_autocast_enabled(), x.dtype, ctx._dtype)
        return x * 2

    @staticmethod
    @custom_bwd
    def backward(ctx, g):
        seen["scale_backward"] = torch.npu.amp.is_autocast_enabled()
        return g * 2


class Plain(torch.autograd.Function):
    @staticmethod
    @custom_fwd
    def forward(ctx, x, w):
        seen["plain"] = (torch.npu.amp.is_autocast_enabled(), ctx._dtype)
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    @custom_bwd
    def backward(ctx, g):
        seen["plain_backward"] = (
            torch.npu.amp.is_autocast_enabled(),
            torch.npu.get_autocast_dtype(),
        )
        x, w = ctx.saved_tensors
        return g @ w.t(), x.t() @ g


def test_custom_fwd_and_bwd():
    """forward records the region's dtype as ``ctx._dtype`` (torch_npu's custom_fwd), backward
    runs in the forward's autocast state and dtype, and ``cast_inputs`` runs forward outside
    autocast."""
    seen.clear()
    x = npu(3, 3).half().requires_grad_()
    with autocast():
        y = Scale.apply(x)
    assert y.dtype == torch.float32  # run outside autocast on fp32 inputs
    y.sum().backward()
    assert x.grad.dtype == torch.float16
    assert seen["scale"] == (False, torch.float32, torch.float16)
    assert seen["scale_backward"] is False
    a, w = npu(2, 3).requires_grad_(), npu(3, 3, seed=1).requires_grad_()
    with autocast():
        out = Plain.apply(a, w)
    assert out.dtype == torch.float16  # the matmul inside met autocast
    out.float().sum().backward()  # outside the region, yet backward runs as forward did
    assert a.grad.dtype == torch.float32
    assert seen["plain"] == (True, torch.float16)
    assert seen["plain_backward"] == (True, torch.float16)
    out = Plain.apply(a, w)  # outside autocast: no-ops
    out.sum().backward()
    assert out.dtype == torch.float32 and seen["plain_backward"] == (False, torch.float16)
    if TORCH2:  # torch_npu 2.x points to torch.amp's decorators
        with pytest.warns(
            FutureWarning,
            match=r"torch\.amp\.custom_fwd\(args\.\.\., "
            r"device_type='npu'\)",
        ):
            custom_fwd(lambda ctx, x: x)


# --- GradScaler --------------------------------------------------------------------------------


def make_model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(2, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 3 * 3, 3)).npu()


def batches(n):
    g = torch.Generator().manual_seed(5)
    return [
        (torch.randn(4, 2, 5, 5, generator=g).npu(), torch.randn(4, 3, generator=g).npu())
        for _ in range(n)
    ]


def test_training_equals_a_loop_written_by_hand():
    model, ref = make_model(), make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    scaler = GradScaler(init_scale=2.0**10, growth_interval=3)
    scale, clean = 2.0**10, 0
    for x, y in batches(7):
        for m, o in ((model, opt), (ref, ref_opt)):
            o.zero_grad()
        with autocast():
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        # By hand: the same forward under autocast, scale, unscale, check, step, grow.
        float_status.clear()
        with autocast():
            ref_loss = F.mse_loss(ref(x), y)
        (ref_loss * torch.full((1,), scale).npu()).backward()
        grads = [p.grad for p in ref.parameters()]
        for g in grads:
            g.mul_(1.0 / scale)
        overflow = float_status.clear() or not all(bool(torch.isfinite(g).all()) for g in grads)
        if overflow:
            scale *= 0.5
            clean = 0
        else:
            ref_opt.step()
            clean += 1
            if clean == 3:
                scale *= 2.0
                clean = 0
        assert scaler.get_scale() == scale
    for a, b in zip(model.parameters(), ref.parameters()):
        assert torch.equal(a, b)
    assert scaler.get_scale() == 2.0**12  # grew twice in 7 clean steps


def test_an_overflow_only_the_float_status_sees_skips_the_step_and_backs_off():
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler(init_scale=1024.0)
    before = [p.detach().clone() for p in model.parameters()]
    x, y = batches(1)[0]
    with autocast():
        loss = F.mse_loss(model(x), y)
    scaled = scaler.scale(loss)
    scaled.backward()
    # An fp16 result saturated at 65504 in backward: finite gradients, the status set.
    torch.full((2,), 60000.0).half().npu() * 2.0
    assert float_status.get()
    scaler.step(opt)
    scaler.update()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert scaler.get_scale() == 512.0
    assert not float_status.get()


def test_a_saturation_the_forward_pass_meant_does_not_count():
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler(init_scale=1024.0)
    x, y = batches(1)[0]
    with autocast():
        torch.full((2,), 60000.0).half().npu() * 2.0  # e.g. masked_fill(-1e9) on fp16 scores
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()  # scale() clears the status first
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0


def test_inf_gradients_skip_the_step():
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler(init_scale=8.0)
    x, y = batches(1)[0]
    scaler.scale(F.mse_loss(model(x), y)).backward()
    next(model.parameters()).grad[0] = float("inf")
    before = [p.detach().clone() for p in model.parameters()]
    scaler.step(opt)
    scaler.update()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert scaler.get_scale() == 4.0


def test_unscale_then_clip_then_step():
    model, ref = make_model(), make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler(init_scale=256.0)
    x, y = batches(1)[0]
    scaler.scale(F.mse_loss(model(x), y)).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.01)
    scaler.step(opt)  # does not unscale twice
    scaler.update()
    F.mse_loss(ref(x), y).backward()
    torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.01)
    torch.optim.SGD(ref.parameters(), lr=0.1).step()
    for a, b in zip(model.parameters(), ref.parameters()):
        assert torch.allclose(a, b, rtol=1e-6, atol=1e-7)  # 1/256 is exact; clip reorders sums


def test_static_scale_and_state_dict_with_torchs_keys():
    scaler = GradScaler(init_scale=128.0, dynamic=False)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = batches(1)[0]
    scaler.scale(F.mse_loss(model(x), y)).backward()
    next(model.parameters()).grad[0] = float("nan")
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 128.0  # static: an overflow skips the step only
    dynamic = GradScaler(init_scale=64.0, growth_interval=5)
    dynamic.scale(torch.ones(1).npu())
    state = dynamic.state_dict()
    assert state == {
        "scale": 64.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 5,
        "_growth_tracker": 0,
        "dynamic": True,
    }
    for lazily_made in (False, True):
        restored = GradScaler()
        restored._init_growth_tracker = 7  # load_state_dict overwrites it
        if lazily_made:
            restored.scale(torch.ones(1).npu())
        restored.load_state_dict(state)
        assert restored.get_scale() == 64.0 and restored.get_growth_interval() == 5
        assert restored._init_growth_tracker == 0 and restored._get_growth_tracker() == 0
    assert pickle.loads(pickle.dumps(restored)).get_scale() == 64.0
    static = GradScaler()
    static.load_state_dict(scaler.state_dict())
    assert static._dynamic is False  # torch_npu's key
    torchs = {k: v for k, v in state.items() if k != "dynamic"}  # torch.cuda.amp's checkpoint
    static.load_state_dict(torchs)
    assert static._dynamic is False and static.get_scale() == 64.0
    with pytest.raises(KeyError, match="missing"):
        GradScaler().load_state_dict({"scale": 1.0})


def test_an_overflow_skips_every_optimizer_of_the_scaler_in_inf_nan_mode():
    """torch_npu's scaler-wide flag: once one optimizer's gradients overflowed, the steps of the
    other optimizers of that iteration are skipped too (torch skips only the one), in INF/NAN
    mode as well, where no float status joins them. An optimizer stepped before the overflow was
    found has stepped."""
    previous = overflow_mode.select(True)
    try:
        for order in ("overflow first", "clean first"):
            models = [make_model(0), make_model(1)]
            opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in models]
            scaler = GradScaler(init_scale=64.0)
            x, y = batches(1)[0]
            loss = sum(F.mse_loss(m(x), y) for m in models)
            scaler.scale(loss).backward()
            next(models[0].parameters()).grad[0] = float("inf")
            before = [[p.detach().clone() for p in m.parameters()] for m in models]
            if order == "overflow first":
                scaler.unscale_(opts[0])
                scaler.step(opts[0])
                scaler.step(opts[1])
            else:
                scaler.step(opts[1])
                scaler.step(opts[0])
            scaler.update()
            unchanged = [
                all(torch.equal(a, b) for a, b in zip(old, m.parameters()))
                for old, m in zip(before, models)
            ]
            assert unchanged == ([True, True] if order == "overflow first" else [True, False])
            assert scaler.get_scale() == 32.0  # backed off once
            assert not scaler._has_overflow  # update() ends the iteration
    finally:
        overflow_mode.select(previous)


@pytest.mark.skipif(not TORCH2, reason="torch.amp.GradScaler(device) is torch 2.x's")
def test_torchs_own_grad_scaler_for_npu_sees_the_float_status():
    """torch 2.x's ``torch.amp.GradScaler("npu")`` unscales with
    ``_amp_foreach_non_finite_check_and_unscale_``, the NPU's: a saturation only the float
    status saw skips the step and backs off; a clean step steps."""
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("npu", init_scale=1024.0)
    x, y = batches(1)[0]
    previous = overflow_mode.select(False)  # a 910: saturation and the float status
    try:
        saturating_then_clean_step(model, opt, scaler, x, y)
    finally:
        overflow_mode.select(previous)
    assert scaler.get_scale() == 512.0


def saturating_then_clean_step(model, opt, scaler, x, y):
    for saturate in (True, False):
        opt.zero_grad()
        with torch.autocast("npu"):
            loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        if saturate:
            torch.full((2,), 60000.0).half().npu() * 2.0
        before = [p.detach().clone() for p in model.parameters()]
        scaler.step(opt)
        scaler.update()
        float_status.clear()
        stepped = not all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
        assert stepped is not saturate


@pytest.mark.parametrize("inf_nan", [False, True])
def test_the_scale_never_grows_to_inf(inf_nan):
    """torch_npu grows the scale only to a finite product. In INF/NAN mode the product past
    FLT_MAX is inf, so the scale stays; a 910 saturates the fp32 product to FLT_MAX (raising the
    float status), which is finite, so the scale becomes FLT_MAX, as on that chip."""
    previous = overflow_mode.select(inf_nan)
    try:
        p = nn.Parameter(npu(3))
        opt = torch.optim.SGD([p], lr=0.1)
        top = float(torch.finfo(torch.float32).max) / 1.5
        scaler = GradScaler(init_scale=top, growth_interval=1)
        scaler.scale((p * 0.0).sum()).backward()  # zero gradients: a clean step
        scaler.step(opt)
        scaler.update()
    finally:
        overflow_mode.select(previous)
        float_status.clear()
    expected = top if inf_nan else float(torch.finfo(torch.float32).max)
    assert scaler.get_scale() == pytest.approx(expected, rel=1e-6)
    assert scaler._get_growth_tracker() == 0


# --- torch._amp_foreach_non_finite_check_and_unscale_ ---------------------------------------


def check_and_unscale(grads, inv=0.25):
    found = torch.zeros(1).npu()
    torch._amp_foreach_non_finite_check_and_unscale_(grads, found, torch.full((1,), inv).npu())
    return float(found.item())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_non_finite_check_and_unscale_on_npu_tensors(dtype):
    """The NPU's kernel: gradients multiplied by the inverse scale, an inf or NaN among them
    found, and in saturation mode the float status too (an fp16 overflow left 65504 behind)."""
    g = torch.full((4, 4), 4.0, dtype=dtype).npu()
    grads = [g.clone(), g.clone().t()]
    assert check_and_unscale(grads) == 0.0
    assert all(torch.equal(t, torch.ones_like(t)) for t in grads)
    bad = g.clone()
    bad[1, 2] = float("nan")
    assert check_and_unscale([g.clone(), bad]) == 1.0
    float_status.clear()
    torch.full((2,), 60000.0).half().npu() * 2.0  # saturates: finite, the status set
    previous = overflow_mode.select(False)
    try:
        assert check_and_unscale([g.clone()]) == 1.0
        overflow_mode.select(True)  # INF/NAN mode: the values alone decide
        assert check_and_unscale([g.clone()]) == 0.0
    finally:
        overflow_mode.select(previous)
    float_status.clear()
    other = torch.float16 if dtype == torch.float32 else torch.float32
    with pytest.raises(RuntimeError, match="must have the same dtype"):
        check_and_unscale([g.clone(), g.to(other)])


# --- bfloat16 on a 910B -----------------------------------------------------------------------


def test_bfloat16_autocast_on_a_910b(monkeypatch, kernel_path):
    """As an Ascend 910B (APEXNPU_SOC_VERSION=Ascend910B1), bfloat16 autocast takes fp16's
    policy: matmuls in bf16, norms, softmax and losses in fp32, promotions to the widest; weights
    cast once per region. The loss of a small model matches its fp32 loss within 2e-2 relative
    (bf16 keeps 8 significant bits, about 4e-3 per rounding, over a few roundings)."""
    if kernel_path != "torch":
        pytest.skip("the child runs without the runtime: one run is enough")
    monkeypatch.setenv("APEXNPU_SOC_VERSION", "Ascend910B1")
    out = overlay_support.run_with_emulator("""
        import torch, torch_npu
        import torch.nn as nn, torch.nn.functional as F
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.GELU(),
                              nn.Linear(16, 4)).npu()
        x, y = torch.randn(6, 8).npu(), torch.randn(6, 4).npu()
        w = nn.Parameter(torch.randn(8, 8).npu())
        want = F.mse_loss(model(x), y).item()
        bf16 = torch.bfloat16
        print(torch.npu.get_amp_supported_dtype() == [torch.float16, bf16, torch.float32])
        for region in (lambda: torch.autocast("npu", dtype=bf16),
                       lambda: torch.npu.amp.autocast(dtype=bf16)):
            with region():
                h = model[0](x)
                n = model[1](h)
                out = model(x)
                loss = F.mse_loss(out, y)
                probs = torch.softmax(out, -1)
                a, b = x[:, :4], x[:, 4:]
                kinds = [torch.addcmul(a.to(bf16), a.to(bf16), b.to(bf16)).dtype,
                         torch.addcmul(a.to(bf16), a, b).dtype,
                         torch.addcmul(a.half(), a.to(bf16), b.to(bf16)).dtype]
                first, second = x @ w, x @ w
                once = first.grad_fn.next_functions[1][0] is second.grad_fn.next_functions[1][0]
            print(h.dtype, n.dtype, out.dtype, loss.dtype, probs.dtype, *kinds, once)
            print(abs(loss.item() - want) / want < 2e-2)
        loss.backward()
        print(model[0].weight.grad.dtype)
    """)
    assert out[0] == "True"
    row = [
        "torch.bfloat16",
        "torch.float32",
        "torch.bfloat16",
        "torch.float32",
        "torch.float32",
        "torch.bfloat16",
        "torch.float32",
        "torch.float32",
        "True",
    ]
    assert out[1:11] == row + ["True"]
    assert out[11:21] == row + ["True"]
    assert out[21] == "torch.float32"


def test_misuse_is_a_clear_error():
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler()
    with pytest.raises(RuntimeError, match="no scale yet"):
        scaler.step(opt)
    x, y = batches(1)[0]
    scaler.scale(F.mse_loss(model(x), y)).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already unscaled"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="already called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="closure"):
        scaler.step(opt, closure=lambda: 0)
    scaler.update()
    half = copy.deepcopy(model).half()
    hopt = torch.optim.SGD(half.parameters(), lr=0.1)
    scaler.scale(half(x.half()).float().sum()).backward()
    with pytest.raises(ValueError, match="fp16 gradients"):
        scaler.unscale_(hopt)
    assert GradScaler(enabled=False).scale(torch.ones(1)).item() == 1.0
