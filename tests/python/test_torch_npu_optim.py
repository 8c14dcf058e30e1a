"""torch_npu.optim on the emulated NPU: the NpuFused optimizers with torch_npu's names, arguments
and defaults, and their fused gradient clipping (``clip_grad_norm_fused_``), without apex.

Each optimizer takes 10 steps over parameters of several shapes on ``npu:0`` (given gradients,
so only the optimizer is compared) against torch.optim's class or, where torch has none (AdamP,
BertAdam, LAMB, RMSpropTF), a per-parameter reference written from the published algorithm
(``overlay_support/reference_optimizers.py``):
- fp32 parameters: the reference on the host, within rtol 1e-5, atol 1e-6 (fused kernels sum
  and multiply in another order);
- fp16 parameters: torch_npu's fused optimizers compute in fp16 operations (each result stored
  as fp16 by the NPU), as torch.optim does on fp16 NPU parameters; the reference runs per
  parameter on the same fp16 NPU values, within rtol/atol 2e-3 (the reference rules order some
  operations differently: results a rounding or two apart, fp16's steps 2^-10 apart near 1).
  ``test_fp16_steps_round_every_operation_as_torch_npus`` shows the difference from an fp32
  computation: an eps below fp16's range vanishes, as on the NPU. BertAdam is one NPU operator
  (npu_bert_apply_adam, fp32 inside): its reference runs in fp32 on the host, its parameters and
  state rounded to fp16 after every step, as the operator stores them.
Both step paths run: torch operations (``APEXNPU_OPTIM_PATH=torch``) and the compiled runtime's
fused kernels (``torch_npu._apexnpu``, built from this checkout with $APEXNPU_BINARY; skipped
without it), which step the fp32 buckets (fp16 ones take torch operations either way). A
state_dict saved after 5 steps and loaded into a new optimizer continues bit for bit like
training straight through.
"""

import inspect
import io
import math
import subprocess
import sys

import pytest
import torch

import build_helpers as bh
import overlay_support
from overlay_support import reference_optimizers as ref

# The runtime's copy of torch_npu (with _apexnpu) goes on sys.path before torch_npu is imported.
RUNTIME_DIR = overlay_support.runtime_dir()
sys.path.insert(0, RUNTIME_DIR or overlay_support.SRC_DIR)
import torch_npu  # noqa: E402
from torch_npu import optim as npu_optim  # noqa: E402

FP32 = dict(rtol=1e-5, atol=1e-6)
FP16 = dict(rtol=2e-3, atol=2e-3)
STEPS = 10
SHAPES = [(8, 6), (8,), (6, 3, 3, 3), (4, 8), (4,), (1,)]

# name -> (torch_npu.optim class, reference class, kwargs, reference-only kwargs)
CASES = {
    "sgd": ("NpuFusedSGD", torch.optim.SGD, dict(lr=0.05), {}),
    "sgd_momentum": (
        "NpuFusedSGD",
        torch.optim.SGD,
        dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-3),
        {},
    ),
    "sgd_nesterov": (
        "NpuFusedSGD",
        torch.optim.SGD,
        dict(lr=0.05, momentum=0.9, weight_decay=1e-3, nesterov=True),
        {},
    ),
    "adam": ("NpuFusedAdam", torch.optim.Adam, dict(lr=1e-2, weight_decay=1e-2), {}),
    "adam_amsgrad": ("NpuFusedAdam", torch.optim.Adam, dict(lr=1e-2, amsgrad=True), {}),
    "adamw": ("NpuFusedAdamW", torch.optim.AdamW, dict(lr=1e-2), {}),
    "adamw_amsgrad": (
        "NpuFusedAdamW",
        torch.optim.AdamW,
        dict(lr=1e-2, weight_decay=0.1, amsgrad=True),
        {},
    ),
    "adadelta": ("NpuFusedAdadelta", torch.optim.Adadelta, dict(lr=1.0, weight_decay=1e-2), {}),
    "rmsprop": ("NpuFusedRMSprop", torch.optim.RMSprop, dict(lr=1e-3), {}),
    "rmsprop_momentum_centered": (
        "NpuFusedRMSprop",
        torch.optim.RMSprop,
        dict(lr=1e-3, momentum=0.9, centered=True, weight_decay=1e-3),
        {},
    ),
    # torch_npu's RMSpropTF starts square_avg at ones (timm's rule); Ascend's apex at zeros.
    "rmsprop_tf": (
        "NpuFusedRMSpropTF",
        ref.RMSpropTFReference,
        dict(lr=1e-3, momentum=0.9, weight_decay=1e-2),
        {"square_avg_start": 1.0},
    ),
    "rmsprop_tf_centered_decoupled": (
        "NpuFusedRMSpropTF",
        ref.RMSpropTFReference,
        dict(
            lr=1e-3,
            momentum=0.9,
            centered=True,
            weight_decay=1e-2,
            decoupled_decay=True,
            lr_in_momentum=False,
        ),
        {"square_avg_start": 1.0},
    ),
    "adamp": ("NpuFusedAdamP", ref.AdamPReference, dict(lr=1e-2, weight_decay=1e-2), {}),
    "adamp_nesterov": (
        "NpuFusedAdamP",
        ref.AdamPReference,
        dict(lr=1e-2, weight_decay=1e-2, nesterov=True, delta=0.2),
        {},
    ),
    "lamb": ("NpuFusedLamb", ref.LambReference, dict(lr=1e-2, weight_decay=1e-2), {}),
    "lamb_adam_global_norm": (
        "NpuFusedLamb",
        ref.LambReference,
        dict(lr=1e-2, adam=True, use_global_grad_norm=True),
        {},
    ),
    # torch_npu's BertAdam clips to max_grad_norm=1.0 by default: -1 here, clipping below.
    "bert_adam": (
        "NpuFusedBertAdam",
        ref.BertAdamReference,
        dict(lr=1e-2, max_grad_norm=-1),
        dict(b2=0.999),
    ),
    "bert_adam_linear_warmup": (
        "NpuFusedBertAdam",
        ref.BertAdamReference,
        dict(lr=1e-2, warmup=0.2, t_total=12, max_grad_norm=-1),
        dict(b2=0.999),
    ),
    "bert_adam_cosine": (
        "NpuFusedBertAdam",
        ref.BertAdamReference,
        dict(lr=1e-2, warmup=0.2, t_total=12, schedule="warmup_cosine", max_grad_norm=-1),
        dict(b2=0.999),
    ),
    "bert_adam_poly": (
        "NpuFusedBertAdam",
        ref.BertAdamReference,
        dict(lr=1e-2, warmup=0.1, t_total=12, schedule="warmup_poly", max_grad_norm=-1),
        dict(b2=0.999),
    ),
}


# Fused optimizers whose step is one NPU operator (fp32 inside) rather than fp16 operations.
ONE_OPERATOR = {"NpuFusedBertAdam"}


def start_values(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g) for s in SHAPES]


def grads_of_step(step):
    g = torch.Generator().manual_seed(100 + step)
    return [torch.randn(s, generator=g) * 0.5 for s in SHAPES]


def on_npu_params(values, dtype):
    return [torch.nn.Parameter(v.to(dtype).npu()) for v in values]


def reference_kwargs(kwargs, extra):
    kwargs = dict(kwargs, **extra)
    if "use_global_grad_norm" in kwargs:
        kwargs["global_clip"] = kwargs.pop("use_global_grad_norm")
    return kwargs


def run_fused(case, dtype, steps=STEPS, first=0, params=None, opt=None):
    cls_name, _, kwargs, _ = CASES[case]
    if params is None:
        params = on_npu_params(start_values(), dtype)
    if opt is None:
        opt = getattr(npu_optim, cls_name)(params, **kwargs)
    for step in range(first, first + steps):
        opt.zero_grad()
        for p, g in zip(params, grads_of_step(step)):
            if p.grad is None:
                p.grad = g.to(dtype).npu()
            else:
                p.grad.copy_(g.to(dtype).npu())
        opt.step()
    return params, opt


def round_to_fp16(opt):
    """An NPU operator stores fp16 parameters and state: round the reference's after a step."""
    with torch.no_grad():
        for group in opt.param_groups:
            for p in group["params"]:
                p.copy_(p.half().float())
                for value in opt.state[p].values():
                    if (
                        isinstance(value, torch.Tensor)
                        and value.is_floating_point()
                        and value.dim() > 0
                    ):
                        value.copy_(value.half().float())


def run_reference(case, dtype, steps=STEPS):
    """fp32: on the host; fp16: per parameter on the same fp16 NPU values (the NPU rounds each
    of its fp16 operations as it rounds the fused optimizer's), or, for a rule that is one NPU
    operator, in fp32 on the host rounded to fp16 after every step."""
    cls_name, ref_cls, kwargs, extra = CASES[case]
    on_npu = dtype == torch.float16 and cls_name not in ONE_OPERATOR
    params = [
        torch.nn.Parameter(v.to(dtype).npu() if on_npu else v.to(dtype).float())
        for v in start_values()
    ]
    opt = ref_cls(params, **reference_kwargs(kwargs, extra))
    for step in range(steps):
        for p, g in zip(params, grads_of_step(step)):
            p.grad = g.to(dtype).npu() if on_npu else g.to(dtype).float()
        opt.step()
        if dtype == torch.float16 and not on_npu:
            round_to_fp16(opt)
    return params


def test_the_cases_cover_every_kind_of_the_runtime_registry():
    assert {cls for cls, *_ in CASES.values()} == {cls for _, cls in bh.registry_kinds()}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_reference(case, dtype, kernel_path):
    got, opt = run_fused(case, dtype)
    want = run_reference(case, dtype)
    for i, (p, q) in enumerate(zip(got, want)):
        assert p.device.type == "npu" and p.dtype == dtype
        # equal_nan: on a 910B (INF/NAN mode) fp16 Adam's eps vanishes and 0/0 gives NaN, in
        # the reference as in the fused step (a 910 saturates it to 0).
        torch.testing.assert_close(
            p.detach().cpu().float(),
            q.detach().cpu().float(),
            **(FP16 if dtype == torch.float16 else FP32),
            equal_nan=True,
            msg=lambda m: f"parameter {i}: {m}",
        )
    # The runtime path ran the runtime's kernels on fp32 (BertAdam's warmup_poly has none).
    kernels = [b.kernel is not None for b in opt._buckets]
    assert all(kernels) == (
        kernel_path == "runtime" and case != "bert_adam_poly" and dtype == torch.float32
    )
    state = opt.state_dict()["state"]
    if CASES[case][0] != "NpuFusedSGD":
        assert all(s["step"] == STEPS and isinstance(s["step"], int) for s in state.values())
    for s in state.values():
        for name, value in s.items():
            if isinstance(value, torch.Tensor):
                assert value.dtype == dtype, name  # as torch_npu: state of the parameter's dtype


def test_fp16_steps_round_every_operation_as_torch_npus(kernel_path):
    """NpuFusedAdam on fp16 parameters computes in fp16 operations, as torch_npu's does and as
    torch.optim.Adam does on the NPU: a gradient of 1e-4 has a second moment (1e-11) below
    fp16's range and eps=1e-8 vanishes from the denominator, so the step divides by zero
    (saturating on a 910, inf on a 910B), and a zero gradient gives 0/0; computed in fp32 the
    first would move its parameter by lr and the second leave it."""
    start = torch.ones(3, dtype=torch.float16)
    grad = torch.tensor([0.5, 1e-4, 0.0], dtype=torch.float16)
    fused_p, torch_p = (torch.nn.Parameter(start.npu()) for _ in range(2))
    fused = npu_optim.NpuFusedAdam([fused_p], lr=1e-3)
    plain = torch.optim.Adam([torch_p], lr=1e-3)
    fused_p.grad, torch_p.grad = grad.npu(), grad.npu()
    fused.step()
    plain.step()
    torch.testing.assert_close(
        fused_p.detach().cpu(), torch_p.detach().cpu(), rtol=0, atol=0, equal_nan=True
    )
    got = fused_p.detach().cpu().float()
    assert got[0] == torch.tensor(1.0 - 1e-3).half().float()  # the ordinary step
    assert got[1] < -6e4 and not got[1:].eq(torch.tensor([1.0 - 1e-3, 1.0]).half()).any()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize(
    "case",
    [
        "sgd_momentum",
        "adamw",
        "rmsprop_tf",
        "lamb",
        "bert_adam",
        "adamp",
        "adadelta",
        "rmsprop_momentum_centered",
    ],
)
def test_state_dict_round_trip_continues_bit_for_bit(case, dtype, kernel_path):
    straight, _ = run_fused(case, dtype, steps=2 * 5)
    params, opt = run_fused(case, dtype, steps=5)
    buf = io.BytesIO()
    torch.save({"params": [p.detach().cpu() for p in params], "opt": opt.state_dict()}, buf)
    buf.seek(0)
    saved = torch.load(buf)
    resumed = on_npu_params(saved["params"], dtype)
    new = getattr(npu_optim, CASES[case][0])(resumed, **CASES[case][2])
    new.load_state_dict(saved["opt"])
    run_fused(case, dtype, steps=5, first=5, params=resumed, opt=new)
    for p, q in zip(resumed, straight):
        assert torch.equal(p.detach().cpu(), q.detach().cpu())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("norm_type", [2.0, math.inf], ids=["l2", "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3], ids=["clips", "below"])
def test_clip_grad_norm_fused_equals_clip_grad_norm_(dtype, norm_type, max_norm, kernel_path):
    params = on_npu_params(start_values(), dtype)
    opt = npu_optim.NpuFusedAdamW(params)
    host = [torch.nn.Parameter(v.to(dtype).float()) for v in start_values()]
    for p, h, g in zip(params, host, grads_of_step(0)):
        p.grad = g.to(dtype).npu()
        h.grad = g.to(dtype).float()
    total = opt.clip_grad_norm_fused_(max_norm, norm_type)
    want = torch.nn.utils.clip_grad_norm_(host, max_norm, norm_type)
    torch.testing.assert_close(total.cpu().float(), want, rtol=1e-5, atol=1e-6)
    tol = FP16 if dtype == torch.float16 else FP32
    for p, h in zip(params, host):
        torch.testing.assert_close(p.grad.cpu().float(), h.grad, **tol)
    # The gradients now live in the combined buffers: the step uses them.
    assert opt.get_combined_grads()[0 if dtype == torch.float32 else 1] is not None
    opt.step()


def test_bert_adam_clips_each_group_to_max_grad_norm(kernel_path):
    """torch_npu's BertAdam: with max_grad_norm > 0 each group's gradients are clipped together
    to it (clip_grad_norm_) before the update."""
    values = start_values()
    params = on_npu_params(values, torch.float32)
    groups = [{"params": params[:3]}, {"params": params[3:], "max_grad_norm": 0.3}]
    opt = npu_optim.NpuFusedBertAdam(groups, lr=1e-2, max_grad_norm=0.5)
    host = [torch.nn.Parameter(v.clone()) for v in values]
    want = ref.BertAdamReference(
        [{"params": host[:3]}, {"params": host[3:]}], lr=1e-2, b2=0.999, max_grad_norm=-1
    )
    for step in range(STEPS):
        grads = grads_of_step(step)
        for p, h, g in zip(params, host, grads):
            p.grad = g.npu()
            h.grad = g.clone()
        opt.step()
        torch.nn.utils.clip_grad_norm_(host[:3], 0.5)
        torch.nn.utils.clip_grad_norm_(host[3:], 0.3)
        want.step()
    for p, h in zip(params, host):
        torch.testing.assert_close(p.detach().cpu(), h.detach(), **FP32)


def test_bert_adam_module_holds_its_warmup_schedules():
    """As torch_npu's module: ``SCHEDULES`` by name (a subclass's step reads them), the
    published algorithm's."""
    from torch_npu.optim import npu_fused_bert_adam

    ref.assert_bert_schedules(npu_fused_bert_adam.SCHEDULES)


def test_signatures_and_defaults_are_torch_npus():
    defaults = {
        "NpuFusedSGD": dict(momentum=0, dampening=0, weight_decay=0, nesterov=False),
        "NpuFusedAdam": dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False),
        "NpuFusedAdamW": dict(
            lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False
        ),
        "NpuFusedAdamP": dict(
            lr=1e-3,
            betas=(0.9, 0.999),
            eps=1e-8,
            weight_decay=0,
            delta=0.1,
            wd_ratio=0.1,
            nesterov=False,
        ),
        "NpuFusedBertAdam": dict(
            lr=1e-3,
            warmup=-1,
            t_total=-1,
            schedule="warmup_linear",
            b1=0.9,
            b2=0.999,
            e=1e-6,
            weight_decay=0.01,
            max_grad_norm=1.0,
        ),
        "NpuFusedAdadelta": dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0),
        "NpuFusedLamb": dict(
            lr=1e-3,
            betas=(0.9, 0.999),
            eps=1e-6,
            weight_decay=0,
            adam=False,
            use_global_grad_norm=False,
        ),
        "NpuFusedRMSprop": dict(
            lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False
        ),
        "NpuFusedRMSpropTF": dict(
            lr=1e-2,
            alpha=0.9,
            eps=1e-10,
            weight_decay=0,
            momentum=0.0,
            centered=False,
            decoupled_decay=False,
            lr_in_momentum=True,
        ),
    }
    assert sorted(npu_optim.__all__) == sorted(list(defaults) + ["NpuFusedOptimizerBase"])
    for name, want in defaults.items():
        cls = getattr(npu_optim, name)
        got = {
            k: v.default
            for k, v in inspect.signature(cls.__init__).parameters.items()
            if k not in ("self", "params")
        }
        if name == "NpuFusedSGD":
            assert "lr" in got  # required
            got.pop("lr")
        assert got == want, name
        assert issubclass(cls, npu_optim.NpuFusedOptimizerBase)
    from torch_npu.optim.npu_fused_optim_base import NpuFusedOptimizerBase  # torch_npu's path

    assert NpuFusedOptimizerBase is npu_optim.NpuFusedOptimizerBase
    assert torch_npu.optim is npu_optim


@pytest.mark.parametrize(
    "kwargs", [dict(lr=-1.0), dict(betas=(1.0, 0.9)), dict(eps=-1.0), dict(weight_decay=-0.1)]
)
def test_invalid_arguments_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        npu_optim.NpuFusedAdam(on_npu_params(start_values(), torch.float32), **kwargs)


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16], ids=["fp64", "bf16"])
def test_parameters_neither_fp32_nor_fp16_are_refused_when_combined(dtype):
    """As torch_npu's: a parameter with a gradient must be fp32 or fp16 (bfloat16 too, on every
    chip: torch_npu's fused optimizers have no bfloat16), refused at the first step with
    torch_npu's message; one without a gradient is never combined, so never refused."""
    frozen = torch.nn.Parameter(torch.zeros(3, dtype=dtype).npu())
    trained = torch.nn.Parameter(torch.zeros(3).npu())
    opt = npu_optim.NpuFusedSGD([frozen, trained], lr=0.1)
    trained.grad = torch.ones(3).npu()
    opt.step()  # the fp64/bf16 parameter has no gradient
    assert torch.equal(trained.detach().cpu(), torch.full((3,), -0.1))
    assert frozen.tolist() == [0.0] * 3
    frozen.grad = torch.zeros(3, dtype=dtype).npu()
    with pytest.raises(TypeError) as refused:
        opt.step()
    assert str(refused.value).startswith(
        f"Fused optimizer's parameters must be either float32 or float16, but received {dtype}"
    )


def test_bad_parameters_and_set_to_none_are_refused():
    params, opt = run_fused("adam", torch.float32, steps=1)
    with pytest.raises(ValueError):
        opt.zero_grad(set_to_none=True)
    opt.zero_grad()
    assert all(p.grad is not None and not p.grad.any() for p in params)


def test_replaced_parameter_is_combined_again(kernel_path):
    """torch_npu trains stale copies after a parameter is re-allocated; ours notices it."""
    params, opt = run_fused("adamw", torch.float32, steps=3)
    fused_before = opt.get_combined_params()[0]
    with torch.no_grad():
        params[0].data = params[0].detach().clone()  # re-allocated, as .cpu().npu() would
    run_fused("adamw", torch.float32, steps=STEPS - 3, first=3, params=params, opt=opt)
    assert opt.get_combined_params()[0] is not fused_before
    want = run_reference("adamw", torch.float32)
    for p, q in zip(params, want):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), **FP32)


def test_torch_npu_optim_never_imports_apex():
    code = (
        "import sys, torch, torch_npu; from torch_npu.optim import NpuFusedAdamW; "
        "print(sorted(m for m in sys.modules if m == 'apex' or m.startswith('apex.')))"
    )
    env = dict(overlay_support.overlay_env(RUNTIME_DIR))
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]"]


def test_init_param_state_takes_torch_npus_options_per_optimizer():
    """torch_npu's ``_init_param_state(p, ...)``: each optimizer's group options after the
    parameter; a parameter's state made at its starting values, or copied into new tensors."""
    p = torch.nn.Parameter(torch.full((2,), 2.0).npu())
    p.grad = torch.full((2,), 0.5).npu()
    tf = npu_optim.NpuFusedRMSpropTF([p])
    tf._init_param_state(p, 0.9, True)  # momentum, centered
    assert sorted(tf.state[p]) == ["grad_avg", "momentum_buffer", "square_avg", "step"]
    assert tf.state[p]["step"] == 0 and tf.state[p]["square_avg"].tolist() == [1.0, 1.0]
    made = tf.state[p]["square_avg"]
    tf._init_param_state(p, momentum=0.9, centered=True)
    assert tf.state[p]["square_avg"] is not made and tf.state[p]["square_avg"].tolist() == [1.0] * 2
    adam = npu_optim.NpuFusedAdam([p])
    adam._init_param_state(p, True)  # amsgrad
    assert sorted(adam.state[p]) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
    sgd = npu_optim.NpuFusedSGD([p], lr=0.1, momentum=0.9)
    sgd._init_param_state(p, 0.25)  # weight_decay: the buffer starts as the decayed gradient
    assert sgd.state[p]["momentum_buffer"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("case", ["sgd_momentum", "adam_amsgrad", "rmsprop_tf"])
def test_torch_npus_combined_state_hooks_and_views(case):
    """``params_lists_indexed_by_group`` set and ``_maybe_init_combined_states()`` called
    before the first step, as torch_npu's own step does, change nothing of the training; after
    a step the per-group views are parts of the combined buffers and the state."""
    cls_name, _, kwargs, _ = CASES[case]
    want, _ = run_fused(case, torch.float16, steps=3)
    params = on_npu_params(start_values(), torch.float16)
    opt = getattr(npu_optim, cls_name)(params, **kwargs)
    for p, g in zip(params, grads_of_step(0)):
        p.grad = g.half().npu()
    opt.params_lists_indexed_by_group = [[[], list(params)]]
    opt._maybe_init_combined_states()
    assert opt.is_states_combined
    fp16_state = opt.combined_param_states_indexed_by_group[0][1]
    name = {
        "sgd_momentum": "momentum_buffer",
        "adam_amsgrad": "max_exp_avg_sq",
        "rmsprop_tf": "square_avg",
    }[case]
    assert fp16_state[name] is not None and fp16_state["step"] == 0
    opt.step()
    run_fused(case, torch.float16, steps=2, first=1, params=params, opt=opt)
    for p, q in zip(params, want):
        assert torch.equal(p.detach().cpu(), q.detach().cpu())
    assert opt.is_params_grads_combined and opt.is_states_combined
    assert opt.params_lists_indexed_by_group == [[[], params]]
    fp32_part, fp16_part = opt.combined_params_indexed_by_group[0]
    assert fp32_part is None and fp16_part.data_ptr() == opt.get_combined_params()[1].data_ptr()
    assert (
        opt.combined_grads_indexed_by_group[0][1].data_ptr()
        == opt.get_combined_grads()[1].data_ptr()
    )
    state = opt.combined_param_states_indexed_by_group[0][1]
    assert state[name].data_ptr() == opt.state[params[0]][name].data_ptr()
    if cls_name != "NpuFusedSGD":
        assert state["step"] == 3
