"""Optimizer checkpoints move between Ascend's apex and ours, both ways (issue 18, point 5).

"Theirs" is Ascend's algorithm and state layout written per parameter in
overlay_support/reference_optimizers.py (BertAdamReference: Ascend's NpuFusedBertAdam, moments
``exp_avg``/``exp_avg_sq``, gradients divided by the global norm above 1, a ``step`` it reads
but never writes back; LambReference: Ascend's Lamb, with ``weight_norm``, ``adam_norm`` and
``trust_ratio`` in each parameter's state). A checkpoint goes through torch.save/torch.load as
a user's file does. After loading, the moments must be the checkpoint's (not reset) and ten
more steps must agree with the writer's own continuation within 1e-5 relative (atol 1e-6): fp32
throughout, the fused optimizer differing from the per-parameter one only in rounding.

The loss is scaled by 20 so that the global gradient norm exceeds 1 and BertAdam's division
runs. Both step paths run, as in test_overlay_optimizers.
"""

import copy
import io

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from overlay_support import use_overlay
from overlay_support import reference_optimizers as ref

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
from apex.optimizers.npu_fused import Lamb, NpuFusedBertAdam, NpuFusedLamb  # noqa: E402

RTOL, ATOL = 1e-5, 1e-6
LOSS_FACTOR = 20.0

CASES = {
    "bert_adam": (
        NpuFusedBertAdam,
        ref.BertAdamReference,
        dict(lr=1e-2, warmup=0.1, t_total=40, max_grad_norm=1.0),
    ),
    "bert_adam_two_groups": (NpuFusedBertAdam, ref.BertAdamReference, "two_groups"),
    "lamb": (Lamb, ref.LambReference, dict(lr=1e-2, weight_decay=1e-2)),
}
MOMENTS = ("exp_avg", "exp_avg_sq")


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4)
    )


def make(cls, kwargs, model):
    if kwargs == "two_groups":  # the decay-free group clips nothing, the other divides
        params = list(model.parameters())
        return cls(
            [dict(params=params[:2], max_grad_norm=-1, weight_decay=0.0), dict(params=params[2:])],
            lr=1e-2,
            max_grad_norm=1.0,
        )
    return cls(model.parameters(), **kwargs)


def data():
    g = torch.Generator().manual_seed(1)
    return [
        (torch.randn(16, 6, generator=g), torch.randint(0, 4, (16,), generator=g))
        for _ in range(20)
    ]


def train(model, opt, first, steps):
    batches = data()
    for i in range(first, first + steps):
        x, y = batches[i]
        opt.zero_grad()
        (F.cross_entropy(model(x), y) * LOSS_FACTOR).backward()
        opt.step()


def through_a_file(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf)


def checkpoint_after_ten_steps(cls, kwargs):
    model = make_model()
    opt = make(cls, kwargs, model)
    train(model, opt, 0, 10)
    return through_a_file({"model": model.state_dict(), "optimizer": opt.state_dict()})


def resume(cls, kwargs, ck):
    """A model and optimizer resumed from their own copy of ``ck``, as from a file: torch 2.x's
    load_state_dict keeps the loaded state tensors (1.13 copied them), so two optimizers
    resumed from one dict would step the same moments."""
    ck = copy.deepcopy(ck)
    model = make_model()
    model.load_state_dict(ck["model"])
    opt = make(cls, kwargs, model)
    opt.load_state_dict(ck["optimizer"])
    return model, opt


def assert_moments_loaded(opt, model, ck):
    saved = ck["optimizer"]["state"]
    for index, p in enumerate(model.parameters()):
        for name in MOMENTS:
            assert torch.equal(opt.state[p][name], saved[index][name]), (index, name)
            assert saved[index][name].abs().sum() > 0  # a reset would read zeros


def continue_both(ours_cls, theirs_cls, kwargs, ck, loader):
    """Both optimizers resume from ``ck`` and take ten more steps; the ``loader``'s moments
    must be the checkpoint's, and the two must agree."""
    their_model, theirs = resume(theirs_cls, kwargs, ck)
    our_model, ours = resume(ours_cls, kwargs, ck)
    if loader == "ours":
        assert_moments_loaded(ours, our_model, ck)
    else:
        assert_moments_loaded(theirs, their_model, ck)
    train(their_model, theirs, 10, 10)
    train(our_model, ours, 10, 10)
    assert_close(our_model, their_model)


def assert_close(a, b):
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p.detach(), q.detach(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_ascend_checkpoint_loads_into_ours_and_continues(case, kernel_path):
    ours_cls, theirs_cls, kwargs = CASES[case]
    ck = checkpoint_after_ten_steps(theirs_cls, kwargs)
    continue_both(ours_cls, theirs_cls, kwargs, ck, loader="ours")


@pytest.mark.parametrize("case", sorted(CASES))
def test_our_checkpoint_loads_into_ascend_and_continues(case, kernel_path):
    ours_cls, theirs_cls, kwargs = CASES[case]
    ck = checkpoint_after_ten_steps(ours_cls, kwargs)
    assert all(set(MOMENTS) <= set(s) for s in ck["optimizer"]["state"].values())
    continue_both(ours_cls, theirs_cls, kwargs, ck, loader="theirs")


def test_bert_adam_divides_by_the_global_norm_as_ascend(kernel_path):
    ours_cls, theirs_cls, kwargs = CASES["bert_adam_two_groups"]
    a, b = make_model(), make_model()
    ours, theirs = make(ours_cls, kwargs, a), make(theirs_cls, kwargs, b)
    x, y = data()[0]
    (F.cross_entropy(a(x), y) * LOSS_FACTOR).backward()
    norm = float(torch.norm(torch.stack([p.grad.norm() for p in a.parameters()])))
    assert norm > 1.0  # so the division runs
    train(a, ours, 0, 20)
    train(b, theirs, 0, 20)
    assert_close(a, b)


def test_lamb_keeps_the_norms_and_trust_ratio_of_its_last_step(kernel_path):
    a, b = make_model(), make_model()
    ours, theirs = Lamb(a.parameters(), lr=1e-2), ref.LambReference(b.parameters(), lr=1e-2)
    train(a, ours, 0, 5)
    train(b, theirs, 0, 5)
    for p, q in zip(a.parameters(), b.parameters()):
        for name in ("weight_norm", "adam_norm", "trust_ratio"):
            torch.testing.assert_close(
                ours.state[p][name].float().reshape(()),
                theirs.state[q][name].float(),
                rtol=1e-5,
                atol=0,
            )
    # NpuFusedLamb, as Ascend's, keeps only the moments and the step.
    c = make_model()
    fused = NpuFusedLamb(c.parameters(), lr=1e-2)
    train(c, fused, 0, 1)
    assert set(fused.state[next(c.parameters())]) == {"step", "exp_avg", "exp_avg_sq"}


def test_bert_adam_loads_the_names_it_wrote_before_and_refuses_ambiguous_state():
    ck = checkpoint_after_ten_steps(NpuFusedBertAdam, CASES["bert_adam"][2])
    legacy = copy.deepcopy(ck)
    for state in legacy["optimizer"]["state"].values():
        state["next_m"], state["next_v"] = state.pop("exp_avg"), state.pop("exp_avg_sq")
    model, opt = resume(NpuFusedBertAdam, CASES["bert_adam"][2], legacy)
    assert_moments_loaded(opt, model, ck)
    assert not any("next_m" in s or "next_v" in s for s in opt.state.values())
    both = copy.deepcopy(ck)
    both["optimizer"]["state"][0]["next_m"] = torch.zeros(32, 6)
    with pytest.raises(ValueError, match="both 'next_m' and 'exp_avg'"):
        resume(NpuFusedBertAdam, CASES["bert_adam"][2], both)
