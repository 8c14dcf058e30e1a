"""apex.optimizers NpuFused* used without amp, as drop-in replacements for torch.optim.

Parity: 50 steps on an MLP and on a CNN with BatchNorm, against torch.optim or (AdamP, BertAdam,
LAMB, RMSpropTF) a per-parameter reference written from the published algorithm; parameters
agree within 1e-5 relative (atol 1e-6 for entries near zero). Both step paths run: torch
operations on the combined tensors (APEXNPU_OPTIM_PATH=torch, the real-NPU path) and the
runtime's fused kernels (built from this checkout with $APEXNPU_BINARY; skipped without it).

bfloat16 parameters (an emulated Ascend 910B, in a fresh interpreter): every NpuFused class steps
them with fp32 state, each step equal to the reference's in fp32 on the same bfloat16 values,
rounded once to bfloat16; within 2 bfloat16 steps (rtol 2^-6, atol 1e-3). Most agree bit for
bit; those that clip (BertAdam's max_grad_norm, LAMB's) scale the bfloat16 gradients in place,
rounded, as torch's clip_grad_norm_ does, where the reference scales fp32 ones, and a parameter
may then round to the neighbouring bfloat16 value. A checkpoint (fp32 state) resumes bit for
bit. On a 910 a bfloat16 parameter is refused, naming the chip.
"""

# ruff: noqa: E402  (imports placed after setup code)
import copy
import io
import json
import os

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import build_helpers as bh
import overlay_support
from overlay_support import use_overlay
from overlay_support import reference_optimizers as ref

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
import apex.npu  # noqa: E402,F401
from apex.contrib.combine_tensors import is_combined_tensor_valid  # noqa: E402
from apex.optimizers import npu_fused  # noqa: E402
from apex.optimizers.npu_fused import (
    LAMB,
    Lamb,
    NpuFusedAdadelta,
    NpuFusedAdam,
    NpuFusedAdamP,
    NpuFusedAdamW,
    NpuFusedBertAdam,
    NpuFusedLamb,
    NpuFusedRMSprop,
    NpuFusedRMSpropTF,
    NpuFusedSGD,
)

RTOL, ATOL = 1e-5, 1e-6
STEPS = 50

CASES = {
    "sgd": (NpuFusedSGD, torch.optim.SGD, dict(lr=0.05)),
    "sgd_momentum": (
        NpuFusedSGD,
        torch.optim.SGD,
        dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-3),
    ),
    "sgd_nesterov": (
        NpuFusedSGD,
        torch.optim.SGD,
        dict(lr=0.05, momentum=0.9, weight_decay=1e-3, nesterov=True),
    ),
    "adam": (NpuFusedAdam, torch.optim.Adam, dict(lr=1e-2)),
    "adam_wd_amsgrad": (
        NpuFusedAdam,
        torch.optim.Adam,
        dict(lr=1e-2, weight_decay=1e-2, amsgrad=True),
    ),
    "adamw": (NpuFusedAdamW, torch.optim.AdamW, dict(lr=1e-2)),
    "adamw_amsgrad": (
        NpuFusedAdamW,
        torch.optim.AdamW,
        dict(lr=1e-2, weight_decay=0.1, amsgrad=True),
    ),
    "adadelta": (NpuFusedAdadelta, torch.optim.Adadelta, dict(lr=1.0, weight_decay=1e-2)),
    "rmsprop": (NpuFusedRMSprop, torch.optim.RMSprop, dict(lr=1e-3)),
    "rmsprop_momentum_centered": (
        NpuFusedRMSprop,
        torch.optim.RMSprop,
        dict(lr=1e-3, momentum=0.9, centered=True, weight_decay=1e-3),
    ),
    "adamp": (NpuFusedAdamP, ref.AdamPReference, dict(lr=1e-2, weight_decay=1e-2)),
    "adamp_nesterov": (
        NpuFusedAdamP,
        ref.AdamPReference,
        dict(lr=1e-2, weight_decay=1e-2, nesterov=True, delta=0.2),
    ),
    "bert_adam": (NpuFusedBertAdam, ref.BertAdamReference, dict(lr=1e-2)),
    "bert_adam_schedule_clip": (
        NpuFusedBertAdam,
        ref.BertAdamReference,
        dict(lr=1e-2, warmup=0.1, t_total=60, max_grad_norm=0.5),
    ),
    "bert_adam_cosine": (
        NpuFusedBertAdam,
        ref.BertAdamReference,
        dict(lr=1e-2, warmup=0.2, t_total=50, schedule="warmup_cosine"),
    ),
    "bert_adam_linear_no_warmup": (
        NpuFusedBertAdam,
        ref.BertAdamReference,
        dict(lr=1e-2, t_total=80, weight_decay=0.0),
    ),
    "bert_adam_poly": (
        NpuFusedBertAdam,
        ref.BertAdamReference,
        dict(lr=1e-2, warmup=0.1, t_total=60, schedule="warmup_poly"),
    ),
    "lamb": (Lamb, ref.LambReference, dict(lr=1e-2, weight_decay=1e-2)),
    "lamb_adam": (Lamb, ref.LambReference, dict(lr=1e-3, adam=True)),
    "npu_fused_lamb": (NpuFusedLamb, ref.LambReference, dict(lr=1e-2, weight_decay=1e-2)),
    "npu_fused_lamb_global_norm": (
        NpuFusedLamb,
        ref.LambReference,
        dict(lr=1e-2, use_global_grad_norm=True),
    ),
    # AIAK-Training's LAMB: its defaults clip the global gradient norm to 1, with eps 1e-8.
    "lamb_aiak_defaults": (LAMB, ref.LambReference, dict(lr=1e-2, weight_decay=1e-2)),
    "lamb_aiak_l2_no_averaging": (
        LAMB,
        ref.LambReference,
        dict(
            lr=1e-3, weight_decay=1e-2, adam_w_mode=False, grad_averaging=False, max_grad_norm=0.5
        ),
    ),
    "lamb_aiak_as_lamb": (
        LAMB,
        ref.LambReference,
        dict(lr=1e-2, weight_decay=1e-2, eps=1e-6, max_grad_norm=0.0, set_grad_none=False),
    ),
    "rmsprop_tf": (NpuFusedRMSpropTF, ref.RMSpropTFReference, dict(lr=1e-3)),
    "rmsprop_tf_momentum": (
        NpuFusedRMSpropTF,
        ref.RMSpropTFReference,
        dict(lr=1e-3, momentum=0.9, weight_decay=1e-2),
    ),
    "rmsprop_tf_centered_decoupled": (
        NpuFusedRMSpropTF,
        ref.RMSpropTFReference,
        dict(
            lr=1e-3,
            momentum=0.9,
            centered=True,
            weight_decay=1e-2,
            decoupled_decay=True,
            lr_in_momentum=False,
        ),
    ),
}


def reference_kwargs(kwargs, ref_cls=None):
    kwargs = dict(kwargs)
    if ref_cls is ref.LambReference:
        kwargs.pop("set_grad_none", None)  # zero_grad's default: nothing of the update
    if "use_global_grad_norm" in kwargs:
        kwargs["global_clip"] = kwargs.pop("use_global_grad_norm")
    return kwargs


def make_mlp():
    return nn.Sequential(
        nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4)
    )


def make_cnn():
    # Convolutions before batchnorm have no bias: its gradient is zero in exact arithmetic, and
    # adaptive optimizers would amplify the rounding noise left in it.
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Linear(32, 4),
    )


MODELS = {"mlp": (make_mlp, (6,)), "cnn": (make_cnn, (3, 8, 8))}


def batches(shape, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(16, *shape, generator=g), torch.randint(0, 4, (16,), generator=g))
        for _ in range(5)
    ]


def train(model, opt, data, steps, first=0):
    model.train()
    for i in range(first, first + steps):
        x, y = data[i % len(data)]
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()


def assert_params_close(a, b):
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        torch.testing.assert_close(
            p.detach(), q.detach(), rtol=RTOL, atol=ATOL, msg=lambda m: f"{name}: {m}"
        )


def test_the_cases_cover_every_kind_of_the_runtime_registry():
    kinds = {cls.RUNTIME_KIND for cls, *_ in CASES.values()} - {None}
    assert kinds == {kind for kind, _ in bh.registry_kinds()}


@pytest.mark.parametrize("model_name", sorted(MODELS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_parity_with_reference_over_50_steps(case, model_name, kernel_path):
    fused_cls, ref_cls, kwargs = CASES[case]
    factory, shape = MODELS[model_name]
    torch.manual_seed(0)
    fused_model = factory()
    ref_model = copy.deepcopy(fused_model)
    fused = fused_cls(fused_model.parameters(), **kwargs)
    if fused_cls is LAMB:
        kwargs = dict(dict(eps=1e-8, max_grad_norm=1.0), **kwargs)  # LAMB's defaults, said
    reference = ref_cls(ref_model.parameters(), **reference_kwargs(kwargs, ref_cls))
    data = batches(shape)
    train(fused_model, fused, data, STEPS)
    train(ref_model, reference, data, STEPS)
    assert_params_close(fused_model, ref_model)
    # The step really ran fused: every parameter and gradient is a view of its combined buffer.
    buckets = fused.combined_buffers()
    assert len(buckets) == 1 and buckets[0].step == STEPS
    params = list(fused_model.parameters())
    assert is_combined_tensor_valid(buckets[0].param, params)
    assert is_combined_tensor_valid(buckets[0].grad, [p.grad for p in params])


def test_every_param_group_is_fused_with_its_own_hyperparameters(kernel_path):
    torch.manual_seed(0)
    model = make_cnn()
    twin = copy.deepcopy(model)

    def groups(m):
        convs = [p for n, p in m.named_parameters() if n.startswith(("0.", "3."))]
        norms = [p for n, p in m.named_parameters() if n.startswith(("1.", "4."))]
        head = list(m[8].parameters())
        return [
            {"params": convs},
            {"params": norms, "lr": 3e-3, "weight_decay": 0.0},
            {"params": head, "betas": (0.8, 0.99)},
        ]

    fused = NpuFusedAdamW(groups(model), lr=1e-2, weight_decay=0.05)
    reference = torch.optim.AdamW(groups(twin), lr=1e-2, weight_decay=0.05)
    data = batches((3, 8, 8))
    train(model, fused, data, STEPS)
    train(twin, reference, data, STEPS)
    assert_params_close(model, twin)
    assert len(fused.combined_buffers()) == 3
    for bucket, group in zip(fused.combined_buffers(), fused.param_groups):
        assert is_combined_tensor_valid(bucket.param, group["params"])


def test_parameters_without_gradients_are_skipped_like_torch(kernel_path):
    torch.manual_seed(0)
    model = make_mlp()
    twin = copy.deepcopy(model)
    fused = NpuFusedAdam(model.parameters(), lr=1e-2, weight_decay=1e-2)
    reference = torch.optim.Adam(twin.parameters(), lr=1e-2, weight_decay=1e-2)
    data = batches((6,))
    for m, opt in ((model, fused), (twin, reference)):
        for i in range(30):
            x, y = data[i % len(data)]
            opt.zero_grad()
            F.cross_entropy(m(x), y).backward()
            if 10 <= i < 20:  # the first layer is frozen for ten steps
                m[0].weight.grad = None
                m[0].bias.grad = None
            opt.step()
    assert_params_close(model, twin)
    # A number, as Ascend's apex keeps it (from a tensor step its resume counts one too many).
    steps = [fused.state[model[i].weight]["step"] for i in (0, 2)]
    assert [type(s) for s in steps] == [int, int] and steps == [20, 30]


def test_fp16_parameters_without_amp_match_torch_on_the_emulated_npu(kernel_path):
    torch.manual_seed(0)
    model = make_mlp().half()
    twin = copy.deepcopy(model)
    fused = NpuFusedSGD(model.parameters(), lr=0.05, momentum=0.9)
    reference = torch.optim.SGD(twin.parameters(), lr=0.05, momentum=0.9)
    data = [(x.half(), y) for x, y in batches((6,))]
    train(model, fused, data, 20)
    train(twin, reference, data, 20)
    for p, q in zip(model.parameters(), twin.parameters()):
        assert p.dtype == torch.float16
        # Same fp16 operations in the same order: equal up to one fp16 ulp from summation order.
        torch.testing.assert_close(p, q, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("direction", ["torch_to_fused", "fused_to_torch"])
@pytest.mark.parametrize(
    "pair",
    [
        (NpuFusedAdam, torch.optim.Adam, dict(lr=1e-2, amsgrad=True)),
        (NpuFusedSGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9)),
        (NpuFusedRMSprop, torch.optim.RMSprop, dict(lr=1e-3, momentum=0.5, centered=True)),
        (NpuFusedAdadelta, torch.optim.Adadelta, dict()),
    ],
    ids=["adam", "sgd", "rmsprop", "adadelta"],
)
def test_checkpoint_moves_between_torch_and_fused(pair, direction, kernel_path):
    fused_cls, torch_cls, kwargs = pair
    first_cls, second_cls = (
        (torch_cls, fused_cls) if direction == "torch_to_fused" else (fused_cls, torch_cls)
    )
    torch.manual_seed(0)
    model = make_cnn()
    straight = copy.deepcopy(model)
    data = batches((3, 8, 8))

    opt = first_cls(model.parameters(), **kwargs)
    train(model, opt, data, 20)
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer)

    resumed = make_cnn()
    resumed.load_state_dict(checkpoint["model"])
    opt2 = second_cls(resumed.parameters(), **kwargs)
    opt2.load_state_dict(checkpoint["optimizer"])
    train(resumed, opt2, data, 20, first=20)

    reference = torch_cls(straight.parameters(), **kwargs)
    train(straight, reference, data, 40)
    # The runtime's one-pass kernels round differently from torch's operation order, and so does
    # torch 2.x's centered RMSprop (its average of the gradients by lerp_, 1.13's and ours by
    # mul_ and add_); over 40 steps that reaches ~3e-5 relative on single entries.
    centered_on_torch2 = kwargs.get("centered") and int(torch.__version__.split(".")[0]) >= 2
    rtol, atol = (1e-4, 1e-5) if kernel_path == "runtime" or centered_on_torch2 else (RTOL, ATOL)
    for p, q in zip(resumed.parameters(), straight.parameters()):
        torch.testing.assert_close(p.detach(), q.detach(), rtol=rtol, atol=atol)
    assert opt2.state_dict()["state"].keys() == reference.state_dict()["state"].keys()
    for key, value in reference.state_dict()["state"][0].items():
        mine = opt2.state_dict()["state"][0][key]
        if isinstance(value, torch.Tensor) and value.dim() > 0:
            torch.testing.assert_close(mine, value, rtol=rtol, atol=atol)
        elif value is None:
            assert mine is None
        else:
            assert float(mine) == float(value), key


def test_state_dict_layout_equals_torch():
    torch.manual_seed(0)
    model = make_mlp()
    twin = copy.deepcopy(model)
    fused = NpuFusedAdam(model.parameters(), lr=1e-2)
    reference = torch.optim.Adam(twin.parameters(), lr=1e-2)
    data = batches((6,))
    train(model, fused, data, 3)
    train(twin, reference, data, 3)
    mine, theirs = fused.state_dict(), reference.state_dict()
    # torch's groups also carry its own switches (foreach, maximize, ...); ours are a subset.
    for my_group, their_group in zip(mine["param_groups"], theirs["param_groups"]):
        assert my_group == {k: their_group[k] for k in my_group}
    assert mine["state"].keys() == theirs["state"].keys()
    for index, state in theirs["state"].items():
        assert mine["state"][index].keys() == state.keys()
        for key, value in state.items():
            if key == "step":  # a number, as Ascend's apex keeps it; torch's loader takes it
                assert mine["state"][index][key] == int(value)
                continue
            assert mine["state"][index][key].shape == value.shape
            assert mine["state"][index][key].dtype == value.dtype
    loaded = torch.optim.Adam(twin.parameters(), lr=1e-2)
    loaded.load_state_dict(mine)
    assert all(float(loaded.state[p]["step"]) == 3 for p in twin.parameters())


def test_zero_grad_keeps_gradient_memory():
    torch.manual_seed(0)
    model = make_mlp()
    opt = NpuFusedAdam(model.parameters(), lr=1e-2)
    data = batches((6,))
    train(model, opt, data, 2)
    grads = [p.grad for p in model.parameters()]
    ptrs = [g.data_ptr() for g in grads]
    opt.zero_grad(set_to_none=True)
    assert all(p.grad is g for p, g in zip(model.parameters(), grads))
    assert all(float(g.abs().sum()) == 0 for g in grads)
    model.zero_grad(set_to_none=True)
    assert [p.grad.data_ptr() for p in model.parameters()] == ptrs
    x, y = data[0]
    F.cross_entropy(model(x), y).backward()
    bucket = opt.combined_buffers()[0]
    assert is_combined_tensor_valid(bucket.grad, [p.grad for p in model.parameters()])
    assert float(bucket.grad.abs().sum()) > 0


def test_replaced_parameter_is_recombined_not_lost():
    torch.manual_seed(0)
    model = make_mlp()
    twin = copy.deepcopy(model)
    fused = NpuFusedSGD(model.parameters(), lr=0.05, momentum=0.9)
    reference = torch.optim.SGD(twin.parameters(), lr=0.05, momentum=0.9)
    data = batches((6,))
    train(model, fused, data, 5)
    train(twin, reference, data, 5)
    with torch.no_grad():  # the user points a parameter at new memory
        model[0].weight.data = model[0].weight.data.clone() * 0.5
        twin[0].weight.data = twin[0].weight.data.clone() * 0.5
    train(model, fused, data, 5, first=5)
    train(twin, reference, data, 5, first=5)
    assert_params_close(model, twin)
    assert is_combined_tensor_valid(fused.combined_buffers()[0].param, list(model.parameters()))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_optimizer_grad_norm_fused_equals_clip_grad_norm(norm_type, kernel_path):
    torch.manual_seed(0)
    model = make_cnn()
    twin = copy.deepcopy(model)
    fused = NpuFusedSGD(model.parameters(), lr=0.05, momentum=0.9)
    reference = torch.optim.SGD(twin.parameters(), lr=0.05, momentum=0.9)
    data = batches((3, 8, 8))
    for i in range(4):  # the first step clips before the fusion exists, the others after
        x, y = data[i]
        for m, opt in ((model, fused), (twin, reference)):
            opt.zero_grad()
            (F.cross_entropy(m(x), y) * 10).backward()
        got = fused.clip_optimizer_grad_norm_fused(0.5, norm_type=norm_type)
        want = torch.nn.utils.clip_grad_norm_(twin.parameters(), 0.5, norm_type=norm_type)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=0)
        for p, q in zip(model.parameters(), twin.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-7)
        fused.step()
        reference.step()
    assert_params_close(model, twin)


@pytest.mark.parametrize("dtype", [torch.int64, torch.float64])
@pytest.mark.parametrize(
    "cls", [getattr(npu_fused, n) for n in npu_fused.__all__], ids=npu_fused.__all__
)
def test_unsupported_parameter_dtype_is_a_clear_type_error(cls, dtype):
    good = nn.Parameter(torch.zeros(3))
    bad = torch.zeros(3, dtype=dtype)
    kwargs = {"lr": 0.1} if cls in (NpuFusedSGD, NpuFusedBertAdam) else {}
    with pytest.raises(
        TypeError, match=r"parameter 1 of group 0 has dtype torch\.%s" % str(dtype).split(".")[1]
    ):
        cls([good, bad], **kwargs)


def test_signatures_and_defaults_are_those_of_the_manual():
    import inspect

    def defaults(cls):
        return {
            k: v.default
            for k, v in inspect.signature(cls.__init__).parameters.items()
            if k not in ("self", "params")
        }

    from torch.optim.optimizer import required

    assert defaults(NpuFusedSGD) == dict(
        lr=required, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False
    )
    assert defaults(NpuFusedAdam) == dict(
        lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False
    )
    assert defaults(NpuFusedAdamW) == dict(
        lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False
    )
    assert defaults(NpuFusedAdamP) == dict(
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        delta=0.1,
        wd_ratio=0.1,
        nesterov=False,
    )
    assert defaults(NpuFusedBertAdam) == dict(
        lr=required,
        warmup=-1,
        t_total=-1,
        schedule="warmup_linear",
        b1=0.9,
        b2=0.99,
        e=1e-6,
        weight_decay=0.01,
        max_grad_norm=-1,
    )
    assert defaults(NpuFusedAdadelta) == dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0)
    assert defaults(Lamb) == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0, adam=False)
    assert defaults(LAMB) == dict(
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        adam_w_mode=True,
        grad_averaging=True,
        set_grad_none=True,
        max_grad_norm=1.0,
        adam=False,
    )
    assert defaults(NpuFusedLamb) == dict(
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-6,
        weight_decay=0,
        adam=False,
        use_global_grad_norm=False,
    )
    assert defaults(NpuFusedRMSprop) == dict(
        lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False
    )
    assert defaults(NpuFusedRMSpropTF) == dict(
        lr=1e-2,
        alpha=0.9,
        eps=1e-10,
        weight_decay=0,
        momentum=0.0,
        centered=False,
        decoupled_decay=False,
        lr_in_momentum=True,
    )
    for name in npu_fused.__all__:
        assert issubclass(getattr(npu_fused, name), torch.optim.Optimizer)


def test_lamb_set_grad_none_is_zero_grads_default():
    for cls, kwargs, cleared in (
        (LAMB, {}, True),
        (LAMB, dict(set_grad_none=False), False),
        (Lamb, {}, False),
    ):
        model = make_mlp()
        opt = cls(model.parameters(), **kwargs)
        F.cross_entropy(model(torch.randn(4, 6)), torch.tensor([0, 1, 2, 3])).backward()
        opt.zero_grad()
        grads = [p.grad for p in model.parameters()]
        if cleared:
            assert all(g is None for g in grads), cls
        else:
            assert all(g is not None and not g.any() for g in grads), cls
    with pytest.raises(ValueError, match="max_grad_norm"):
        LAMB(make_mlp().parameters(), max_grad_norm=-1.0)


def test_bert_adam_module_holds_its_warmup_schedules():
    """Ascend's BERT recipes read ``npu_fused_bert_adam.SCHEDULES[group["schedule"]]`` in their
    own ``_group_step``: the module has the schedules, as the published algorithm defines them."""
    from apex.optimizers import npu_fused_bert_adam

    ref.assert_bert_schedules(npu_fused_bert_adam.SCHEDULES)


def test_bad_hyperparameters_are_value_errors():
    p = [nn.Parameter(torch.zeros(2))]
    with pytest.raises(ValueError, match="Nesterov"):
        NpuFusedSGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta"):
        NpuFusedAdam(p, betas=(1.0, 0.999))
    with pytest.raises(ValueError, match="schedule"):
        NpuFusedBertAdam(p, lr=0.1, schedule="nope")
    with pytest.raises(ValueError, match="lr"):
        NpuFusedRMSprop(p, lr=-1.0)
    with pytest.raises(ValueError, match="APEXNPU_OPTIM_PATH"):
        import os

        os.environ["APEXNPU_OPTIM_PATH"] = "gpu"
        try:
            from apex.optimizers import step_path as sp

            sp.requested_path()
        finally:
            del os.environ["APEXNPU_OPTIM_PATH"]


# Every class once (the reference's keyword arguments as reference_kwargs gives them).
BF16_CASES = [
    "sgd_momentum",
    "adam_wd_amsgrad",
    "adamw",
    "adadelta",
    "rmsprop_momentum_centered",
    "adamp",
    "bert_adam_schedule_clip",
    "lamb",
    "npu_fused_lamb",
    "lamb_aiak_defaults",
    "rmsprop_tf_momentum",
]

BF16_CHILD = """
import io, json, sys
import torch
import torch.nn as nn
sys.path.insert(0, TESTS)
import torch_npu  # noqa: F401
import apex.npu  # noqa: F401
from apex.optimizers import npu_fused
from overlay_support import reference_optimizers as ref

SHAPES = [(8, 6), (8,), (4, 3, 3), (1,)]


def values(seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g) for s in SHAPES]


out = {}
for case, fused_name, ref_name, kwargs, ref_kwargs in CASES:
    params = [nn.Parameter(v.bfloat16().npu()) for v in values(0)]
    host = [nn.Parameter(v.bfloat16().float()) for v in values(0)]
    fused = getattr(npu_fused, fused_name)(params, **kwargs)
    kind, _, name = ref_name.partition(".")
    reference = getattr(torch.optim if kind == "torch" else ref, name)(host, **ref_kwargs)
    for step in range(10):
        for p, q, g in zip(params, host, values(100 + step)):
            p.grad = (g * 0.5).bfloat16().npu()
            q.grad = (g * 0.5).bfloat16().float()
        fused.step()
        reference.step()
        with torch.no_grad():
            for q in host:  # the parameters are bfloat16: rounded once per step
                q.copy_(q.bfloat16().float())
    states = {str(v.dtype) for p in params for v in fused.state[p].values()
              if isinstance(v, torch.Tensor) and v.dim() > 0}
    # A checkpoint of the first 5 steps, loaded into a new optimizer, goes on bit for bit.
    resumed = [nn.Parameter(v.bfloat16().npu()) for v in values(0)]
    again = getattr(npu_fused, fused_name)(resumed, **kwargs)
    for step in range(10):
        if step == 5:
            saved = io.BytesIO()
            torch.save(again.state_dict(), saved)
            saved.seek(0)
            again = getattr(npu_fused, fused_name)(resumed, **kwargs)
            again.load_state_dict(torch.load(saved))
        for p, g in zip(resumed, values(100 + step)):
            p.grad = (g * 0.5).bfloat16().npu()
        again.step()
    out[case] = dict(
        params=sorted({f"{p.dtype}@{p.device}" for p in params}), states=sorted(states),
        resumed=all(torch.equal(p, q) for p, q in zip(params, resumed)),
        # the worst distance, in units of the tolerance (1 at its edge)
        worst=max(float(((p.detach().cpu().float() - q.detach()).abs()
                         / (1e-3 + 2 ** -6 * q.detach().abs())).max())
                  for p, q in zip(params, host)))
print(json.dumps(out))
"""


def test_bf16_parameters_step_in_fp32_on_a_910b(monkeypatch):
    cases = []
    for case in BF16_CASES:
        fused_cls, ref_cls, kwargs = CASES[case]
        ref_name = (
            "torch." if ref_cls.__module__.startswith("torch") else "ref."
        ) + ref_cls.__name__
        ref_kwargs = (
            dict(dict(eps=1e-8, max_grad_norm=1.0), **kwargs) if fused_cls is LAMB else kwargs
        )  # LAMB's defaults, said
        cases.append(
            [case, fused_cls.__name__, ref_name, kwargs, reference_kwargs(ref_kwargs, ref_cls)]
        )
    assert {c[1] for c in cases} == set(npu_fused.__all__)  # every class
    monkeypatch.setenv("APEXNPU_SOC_VERSION", "Ascend910B1")
    monkeypatch.delenv("APEXNPU_OPTIM_PATH", raising=False)
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    code = f"TESTS = {tests_dir!r}\nCASES = {cases!r}\n" + BF16_CHILD
    got = json.loads(" ".join(overlay_support.run_with_emulator(code)))
    for case in BF16_CASES:
        assert got[case]["params"] == ["torch.bfloat16@npu:0"], case
        assert got[case]["states"] == ["torch.float32"], case
        assert got[case]["resumed"], case
        assert got[case]["worst"] <= 1.0, (case, got[case]["worst"])


def test_bf16_parameters_are_refused_on_a_910_naming_it(monkeypatch):
    monkeypatch.setenv("APEXNPU_SOC_VERSION", "Ascend910A")
    out = overlay_support.run_with_emulator("""
        import torch, torch_npu, apex.npu
        from apex.optimizers.npu_fused import NpuFusedAdamW
        try:
            NpuFusedAdamW([torch.nn.Parameter(torch.zeros(2)),
                           torch.nn.Parameter(torch.zeros(2, dtype=torch.bfloat16).npu())])
        except TypeError as e:
            print(str(e).replace(" ", "_"))
        """)
    assert out == [
        "NpuFusedAdamW:_parameter_1_of_group_0_has_dtype_torch.bfloat16,_which_"
        "Ascend910A_does_not_compute_(bfloat16_needs_an_Ascend_910B_or_later);_fused_"
        "optimizers_support_torch.float32_and_torch.float16_parameters_there"
    ]
