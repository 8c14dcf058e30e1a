"""The emulated NPU (torch_npu): fp16 emulation, saturation, float status, torch.npu.

Every emulated fp16 result is compared with the same computation done in fp32 on the upcast
inputs and rounded to fp16 (exactly equal: the emulation is that computation), or, through
whole networks, with fp32 training at a stated tolerance.
"""

import copy
import os
import subprocess
import sys
import textwrap
import threading

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import overlay_support
from overlay_support import overlay_env, use_overlay

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch_npu._fp16 import float_status, saturation  # noqa: E402
from torch_npu._fp16 import mode as emulation  # noqa: E402

FP16_MAX = 65504.0


# fp16 rounding with torch operations, or with the runtime's one-pass float_to_half (the float
# status then lives in the runtime): conftest.py's kernel_path, on every test.
pytestmark = pytest.mark.usefixtures("kernel_path")


@pytest.fixture(autouse=True)
def emulation_on(kernel_path):
    assert emulation.is_enabled(), "importing torch_npu turns the emulation on"


def half_inputs(*shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g).half() for s in shapes]


SINGLE_OPS = {
    "mm": (lambda a, b: a @ b, [(5, 7), (7, 3)]),
    "addmm": (lambda c, a, b: torch.addmm(c, a, b), [(5, 3), (5, 7), (7, 3)]),
    "bmm": (lambda a, b: torch.bmm(a, b), [(2, 4, 5), (2, 5, 3)]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(4, 6), (3, 6), (3,)]),
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), [(2, 3, 6, 6), (4, 3, 3, 3)]),
    "softmax": (lambda x: F.softmax(x, -1), [(4, 9)]),
    "log_softmax": (lambda x: F.log_softmax(x, 1), [(4, 9)]),
    "layer_norm": (lambda x: F.layer_norm(x, (9,)), [(4, 9)]),
    "gelu": (F.gelu, [(4, 9)]),
    "sigmoid": (torch.sigmoid, [(4, 9)]),
    "tanh": (torch.tanh, [(4, 9)]),
    "relu": (F.relu, [(4, 9)]),
    "exp": (torch.exp, [(4, 9)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(2, 3, 6, 6)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, torch.tensor([0, 3, 8, 1])), [(4, 9)]),
}


@pytest.mark.parametrize("name", sorted(SINGLE_OPS))
def test_fp16_op_equals_fp32_computation_rounded_to_fp16(name):
    fn, shapes = SINGLE_OPS[name]
    inputs = half_inputs(*shapes)
    got = fn(*inputs)
    want = fn(*[x.float() for x in inputs]).half()
    assert got.dtype == torch.float16
    assert torch.equal(got, want)
    assert not float_status.get()


def test_batch_norm_fp16_input_with_fp32_parameters_gives_fp16_output():
    # O2 keeps batchnorm in fp32 while its input is fp16, as cuDNN/NPU batchnorm allows.
    bn = nn.BatchNorm2d(3)
    (x,) = half_inputs((4, 3, 5, 5))
    ref = copy.deepcopy(bn)
    got = bn(x)
    want = ref(x.float()).half()
    assert got.dtype == torch.float16
    assert torch.equal(got, want)
    assert torch.equal(bn.running_mean, ref.running_mean)


def test_mixed_fp16_fp32_follows_type_promotion():
    (a,) = half_inputs((3, 3))
    b = torch.ones(3, 3)
    assert (a + b).dtype == torch.float32
    assert (a * torch.tensor(2.0)).dtype == torch.float16  # 0-dim tensors do not promote


def test_dtype_questions_are_answered_for_fp16_as_torch_answers_them():
    # promote_types and can_cast are aten operations on dtypes alone: no values to widen.
    half, bf16 = torch.float16, torch.bfloat16
    assert torch.promote_types(half, half) is half
    assert torch.promote_types(half, torch.int16) is half
    assert torch.promote_types(bf16, half) is torch.float32
    assert torch.can_cast(half, torch.int8) is False and torch.can_cast(torch.int8, half)
    a = torch.ones(2, dtype=half).npu()
    assert torch.result_type(a, torch.ones(2, dtype=torch.int16).npu()) is half


@pytest.mark.parametrize("path", ["fast", "general"])
def test_complex32_beside_fp16_stays_complex32(path):
    from torch_npu._fp16 import path as emulation_path

    chalf = torch.tensor([1.5 + 2j, -3 + 0.5j], dtype=torch.complex32).npu()
    half = torch.tensor([2.0, 0.25], dtype=torch.float16).npu()
    with emulation_path.using(path):
        out = chalf + half
        scaled = chalf * 2.2
    assert out.dtype == torch.complex32 and scaled.dtype == torch.complex32 and out.is_npu
    assert out.cpu().to(torch.complex64).tolist() == [3.5 + 2j, -2.75 + 0.5j]


def test_overflowing_result_saturates_and_sets_float_status():
    a = torch.full((2, 2), 300.0).half()
    out = a @ a  # 2 * 300 * 300 = 180000 > 65504
    assert out.dtype == torch.float16
    assert torch.all(out == FP16_MAX)
    assert not torch.isinf(out).any()
    assert float_status.get()
    assert float_status.clear() is True
    assert not float_status.get()


def test_negative_overflow_saturates_to_minus_max():
    a = torch.full((3,), -300.0).half()
    out = a * 1000.0
    assert torch.all(out == -FP16_MAX)
    assert float_status.get()


def test_result_within_range_does_not_set_status():
    a = torch.full((2,), 255.0).half()
    assert torch.all(a * 256.0 == 65280.0)
    assert not float_status.get()


def test_conversion_to_fp16_saturates():
    x = torch.tensor([1e6, -1e6, 3.0])
    h = x.half()
    assert h.tolist() == [FP16_MAX, -FP16_MAX, 3.0]
    assert float_status.get()


def test_inplace_op_writes_back_into_the_same_fp16_tensor():
    (x,) = half_inputs((4, 5))
    want = torch.sigmoid(x.float()).half()
    storage_ptr = x.data_ptr()
    alias = x
    ret = x.sigmoid_()
    assert ret is x and alias is x
    assert x.data_ptr() == storage_ptr and x.dtype == torch.float16
    assert torch.equal(x, want)


def test_inplace_op_on_a_view_updates_the_base():
    base = torch.ones(6).half()
    base[2:4].mul_(3.0)
    base.view(2, 3)[1].exp_()
    want = torch.tensor([1, 1, 3, 3, 1, 1], dtype=torch.float32)
    want[3:] = want[3:].exp()
    assert torch.equal(base, want.half())


def test_inplace_overflow_saturates_in_place():
    x = torch.full((3,), 40000.0).half()
    x.mul_(2.0)
    assert torch.all(x == FP16_MAX)
    assert float_status.get()


def test_fills_of_a_tensor_whose_elements_share_memory():
    """fill_ and zero_ write tensors with zero strides (``empty_strided``, ``expand``), as torch
    lets them; other in-place operations on them are refused, as torch refuses them."""
    shared = torch.empty_strided((10,), (0,), dtype=torch.float16).fill_(3)
    assert torch.equal(shared.float(), torch.full((10,), 3.0))
    assert shared.storage().size() == 1
    part = torch.empty_strided((2, 3, 4), (1, 0, 1), dtype=torch.float16)
    part.fill_(40000.0 * 2)  # saturated, once per place in memory
    assert torch.all(part == FP16_MAX) and float_status.get()
    part.zero_()
    assert torch.all(part == 0) and part.stride() == (1, 0, 1)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        torch.zeros(4, dtype=torch.float16).expand(3, 4).add_(1)


def test_out_argument_is_written_and_resized():
    (a, b) = half_inputs((3, 4), (4, 2))
    out = torch.empty(0, dtype=torch.float16)
    ret = torch.mm(a, b, out=out)
    assert ret is out
    assert out.shape == (3, 2)
    assert torch.equal(out, (a.float() @ b.float()).half())


def test_copy_from_fp32_into_fp16_saturates():
    dst = torch.zeros(2).half()
    dst.copy_(torch.tensor([7e4, 2.5]))
    assert dst.tolist() == [FP16_MAX, 2.5]
    assert float_status.get()


def test_views_keep_aliasing():
    x = torch.zeros(4, 4).half()
    v = x.t()[1:3]
    v.fill_(2.0)
    assert x[:, 1:3].eq(2.0).all() and x.sum().item() == 16.0


def test_dropout_in_fp16():
    torch.manual_seed(3)
    x = torch.ones(1000).half()
    y = F.dropout(x, 0.25, training=True)
    assert y.dtype == torch.float16
    kept = y != 0
    assert torch.all(y[kept] == torch.tensor(1 / 0.75).half())
    assert 650 < int(kept.sum()) < 850


def make_cnn():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 8, 3),
        nn.GELU(),
        nn.Flatten(),
        nn.Linear(8 * 2 * 2, 16),
        nn.Tanh(),
        nn.Linear(16, 5),
        nn.LayerNorm(5),
    )


def test_fp16_network_forward_and_backward_track_fp32_within_tolerance():
    torch.manual_seed(0)
    net32 = make_cnn()
    net16 = copy.deepcopy(net32).half()
    x = torch.randn(6, 3, 8, 8)
    target = torch.tensor([0, 1, 2, 3, 4, 0])
    loss32 = F.cross_entropy(net32(x), target)
    loss16 = F.cross_entropy(net16(x.half()), target)
    loss32.backward()
    loss16.backward()
    assert loss16.dtype == torch.float16
    # fp16 storage of weights and activations: ~3 significant digits.
    assert abs(loss16.item() - loss32.item()) <= 5e-3 * abs(loss32.item()) + 1e-3
    for (name, p32), p16 in zip(net32.named_parameters(), net16.parameters()):
        assert p16.grad is not None and p16.grad.dtype == torch.float16, name
        # Relative to the gradient's largest entry, with a floor of 1e-2 for gradients that are
        # zero in exact arithmetic (a conv bias before batchnorm) and pure rounding noise here.
        scale = max(p32.grad.abs().max().item(), 1e-2)
        err = (p16.grad.float() - p32.grad).abs().max().item()
        assert err <= 2e-2 * scale, f"{name}: max abs error {err} vs scale {scale}"
    assert not float_status.get()


def test_backward_overflow_saturates_gradients_and_sets_status():
    w = torch.ones(4, 4).half().requires_grad_()
    x = torch.full((4, 4), 100.0).half()
    (x @ w).sum().mul(1000.0).backward()
    assert w.grad.dtype == torch.float16
    assert torch.all(w.grad == FP16_MAX)
    assert float_status.get()


def test_emulation_is_per_thread_and_can_be_scoped():
    failures = []

    def worker():
        try:
            big = torch.full((2,), 60000.0).half()
            with emulation.enabled():
                assert emulation.is_enabled()
                assert (big * 2).tolist() == [FP16_MAX] * 2  # the NPU saturates
            assert not emulation.is_enabled()
            assert (big * 2).tolist() == [float("inf")] * 2  # CPU torch's own fp16
        except BaseException as e:  # reported to the main thread
            failures.append(e)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert not failures, failures


def test_saturation_helpers():
    assert not saturation.overflows_fp16(torch.tensor([65504.0, -65504.0]))
    assert saturation.overflows_fp16(torch.tensor([65504.5]))
    assert saturation.overflows_fp16(torch.tensor([float("nan")]))
    assert saturation.to_fp16(torch.tensor([float("inf")])).item() == FP16_MAX


def test_nan_is_stored_as_zero_on_both_kernel_paths():
    out = saturation.to_fp16(torch.tensor([float("nan"), -float("inf"), 1.0]))
    assert out.tolist() == [0.0, -FP16_MAX, 1.0] and float_status.clear()
    dst = torch.ones(2).half()
    saturation.store_fp16(dst, torch.tensor([float("nan"), 2.0]))
    assert dst.tolist() == [0.0, 2.0] and float_status.clear()
    assert (torch.zeros(1).half() / torch.zeros(1).half()).item() == 0.0  # 0/0 is NaN in fp32
    assert float_status.get()


# --- torch.npu (devices, tensors and modules: test_emulator_devices.py) ----------------------


def test_shim_float_status_calls_share_the_flag():
    assert not torch.npu.get_npu_overflow_flag()
    status = torch.npu_alloc_float_status()
    torch.npu_get_float_status(status)
    assert status.sum().item() == 0
    torch.full((1,), 6e4).half() * 2.0
    assert torch.npu.get_npu_overflow_flag()
    assert torch.npu_get_float_status(status)[0].item() == 1.0
    torch.npu_clear_float_status(status)
    assert not float_status.get()


def run_child(code):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=overlay_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ascend_script_runs_unchanged_in_a_fresh_process():
    proc = run_child("""
        import torch, torch.nn as nn
        import torch_npu
        torch.npu.set_device(0)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1)).npu().half()
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        data = torch.randn(64, 4).npu(non_blocking=True)
        target = data.sum(1, keepdim=True).npu(non_blocking=True)
        first = None
        for _ in range(60):
            opt.zero_grad()
            loss = ((model(data.half()).float() - target) ** 2).mean()
            loss.backward()
            opt.step()
            first = first if first is not None else loss.item()
        print(first, loss.item())
    """)
    assert proc.returncode == 0, proc.stderr
    first, last = map(float, proc.stdout.split())
    assert last < 0.2 * first


def test_apex_over_a_real_torch_npu_installs_nothing_of_the_emulator(tmp_path):
    # A stand-in for Huawei's torch_npu (the real one needs Ascend hardware): torch.npu with an
    # amp.GradScaler, no emulator mark. apex uses it as it is and only extends its GradScaler.
    pkg = tmp_path / "torch_npu"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import sys, torch, types\n"
        "npu = types.ModuleType('torch_npu.npu')\n"
        "npu.marker = 'real'\n"
        "npu.amp = types.ModuleType('torch_npu.npu.amp')\n"
        "class GradScaler:\n"
        "    def scale(self, outputs): return outputs\n"
        "    def unscale_(self, optimizer): pass\n"
        "    def step(self, optimizer, *a, **k): return optimizer.step(*a, **k)\n"
        "    def update(self, new_scale=None): pass\n"
        "    def get_scale(self): return 1.0\n"
        "    def state_dict(self): return {}\n"
        "    def load_state_dict(self, state): pass\n"
        "npu.amp.GradScaler = GradScaler\n"
        "torch.npu = npu\n"
        "sys.modules['torch_npu.npu'] = npu\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), overlay_support.OVERLAY_DIR])
    code = (
        "import torch, apex.npu\n"
        "print(apex.npu.is_real_npu(), apex.npu.device_type(), torch.npu.marker,"
        " hasattr(torch.Tensor, 'npu'), torch.npu.amp.GradScaler._apexnpu_native_amp_o2,"
        " torch.npu.amp.amp_decorate is apex.npu.amp_decorate)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "npu", "real", "False", "True", "True"]


def test_emulation_can_be_left_off_by_environment():
    env = overlay_env()
    env["APEXNPU_EMULATION"] = "0"
    code = (
        "import torch, torch_npu; from torch_npu._fp16 import mode; "
        "print(mode.is_enabled(), torch.npu.is_available())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True"]


def test_legacy_tensor_constructor_works_under_the_emulation():
    # torch 1.13's torch.Tensor(...) fails under any dispatch mode unless the emulation pauses.
    assert torch.Tensor().shape == (0,)
    assert torch.Tensor(2, 3).shape == (2, 3)
    assert torch.Tensor([1, 2]).tolist() == [1.0, 2.0]

    class Subclass(torch.Tensor):
        pass

    assert type(Subclass()) is Subclass
    assert nn.Parameter(torch.Tensor(3)).shape == (3,)


def test_allocations_do_not_read_their_garbage_through_the_saturation_check():
    # Uninitialised fp16 memory may hold any bit pattern; allocating it is no overflow.
    for _ in range(20):
        torch.empty(4096, dtype=torch.float16)
        torch.empty_strided((64, 64), (64, 1), dtype=torch.float16)
        torch.ones(3).half().new_empty(4096)
        torch.empty_like(torch.ones(4096).half())
    assert not float_status.get()
