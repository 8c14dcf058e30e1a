"""The overlay's pieces of apex.amp that run without upstream Apex: option validation, unscaling
with overflow detection, and combined gradients (combine_grad)."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from overlay_support import use_overlay

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
from apex.contrib.combine_tensors import is_combined_tensor_valid  # noqa: E402
from apex.npu.amp import float_status, loss_scaling  # noqa: E402
from apex.npu.amp.amp_options import NpuAmpOptions  # noqa: E402
from apex.npu.ddp import ddp_overlap  # noqa: E402
from apex.npu.combined.grad_buffers import CombinedGrads  # noqa: E402
from apex.optimizers.npu_fused import NpuFusedAdam, NpuFusedSGD  # noqa: E402

SCALE = 1024.0  # a power of two: scaling and unscaling are exact in fp32


@pytest.fixture(autouse=True)
def clean_status():
    float_status.clear()
    yield
    float_status.clear()


# --- options -----------------------------------------------------------------------------------


def test_defaults_are_those_of_the_manual():
    o = NpuAmpOptions("O1")
    assert (
        o.combine_grad,
        o.combine_ddp,
        o.ddp_replica_count,
        o.user_cast_preferred,
        o.check_combined_tensors,
    ) == (False, False, 4, False, False)
    assert (
        o.dynamic_init_scale,
        o.scale_growth_factor,
        o.scale_backoff_factor,
        o.scale_window,
        o.min_loss_scale,
        o.max_loss_scale,
    ) == (2.0**16, 2.0, 0.5, 2000, None, 2.0**24)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(opt_level="O0", combine_grad=True), "combine_grad=True needs opt_level 'O1' or 'O2'"),
        (dict(opt_level="O3", combine_grad=True), "got 'O3'"),
        (dict(opt_level="O2", user_cast_preferred=True), "user_cast_preferred=True only applies"),
        (dict(opt_level="O1", check_combined_tensors=True), "needs combine_grad=True"),
        (dict(opt_level="O1", combine_ddp=True), "combine_ddp=True needs combine_grad=True"),
        (dict(opt_level="O1", ddp_replica_count=0), "ddp_replica_count must be a positive int"),
        (dict(opt_level="O1", ddp_replica_count=2.5), "ddp_replica_count"),
        (dict(opt_level="O1", combine_grad="yes"), "combine_grad must be True, False or None"),
        (dict(opt_level="O1", dynamic_init_scale=float("inf")), "dynamic_init_scale"),
        (dict(opt_level="O1", scale_backoff_factor=1.5), "scale_backoff_factor must be in"),
        (dict(opt_level="O1", scale_growth_factor=0.5), "scale_growth_factor must be >= 1"),
        (dict(opt_level="O1", scale_window=0), "scale_window must be a positive int"),
        (dict(opt_level="O1", min_loss_scale=8.0, max_loss_scale=4.0), "is above max_loss_scale"),
    ],
)
def test_invalid_options_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        NpuAmpOptions(**kwargs)


# --- unscaling ---------------------------------------------------------------------------------


def test_unscale_tensors_into_masters_and_detects_non_finite():
    model = [torch.tensor([2.0, 4.0]).half(), torch.tensor([8.0])]
    master = [torch.zeros(2), model[1]]
    assert not loss_scaling.unscale_tensors(model, master, 0.5)
    assert master[0].tolist() == [1.0, 2.0] and master[1].tolist() == [4.0]
    assert not float_status.get()
    bad = [torch.tensor([1.0, float("nan")])]
    # Found in the values, returned: apex does not raise the device's float status for it.
    assert loss_scaling.unscale_tensors(bad, bad, 0.5)
    assert not loss_scaling.take_overflow()


def test_unscale_flat_with_model_buffer_and_stash(kernel_path):
    grad = torch.tensor([4.0, 0.0, 2.0])
    model = torch.tensor([0.0, 8.0, 0.0]).half()
    stash = torch.tensor([1.0, 1.0, 1.0])
    assert not loss_scaling.unscale_flat(grad, 0.25, stash, model)
    assert grad.tolist() == [2.0, 3.0, 1.5]
    assert loss_scaling.unscale_flat(torch.tensor([float("inf")]), 0.5)
    assert not float_status.get()


# --- combined gradients ------------------------------------------------------------------------


def make_model():
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))


def data(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(8, 5, generator=g), torch.randint(0, 3, (8,), generator=g)) for _ in range(4)
    ]


def scaled_training_step(model, opt, combined, x, y, accumulate=1):
    opt.zero_grad()
    for _ in range(accumulate):  # several scale_loss passes, each unscaled (no delay_unscale)
        combined.prepare()
        (F.cross_entropy(model(x), y) * SCALE).backward()
        assert not combined.unscale(1.0 / SCALE)
    opt.step()


def plain_training_step(model, opt, x, y, accumulate=1):
    opt.zero_grad()
    for _ in range(accumulate):
        F.cross_entropy(model(x), y).backward()
    opt.step()


@pytest.mark.parametrize("fused", [False, True], ids=["torch_sgd", "npu_fused_sgd"])
@pytest.mark.parametrize("accumulate", [1, 3])
def test_combined_unscale_equals_unscaled_training(fused, accumulate, kernel_path):
    torch.manual_seed(0)
    model = make_model()
    twin = copy.deepcopy(model)
    cls = NpuFusedSGD if fused else torch.optim.SGD
    opt = cls(model.parameters(), lr=0.1, momentum=0.9)
    ref = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    combined = CombinedGrads(opt)
    for x, y in data() * 3:
        scaled_training_step(model, opt, combined, x, y, accumulate)
        plain_training_step(twin, ref, x, y, accumulate)
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7)
    grads = [p.grad for p in model.parameters()]
    assert len(combined.units) == 1
    assert is_combined_tensor_valid(combined.units[0].grad, grads)
    if fused:  # amp and the optimizer share one gradient buffer
        assert combined.units[0].grad is opt.combined_buffers()[0].grad


def test_fp16_model_with_fp32_masters_share_one_layout(kernel_path):
    torch.manual_seed(0)
    model = make_model().half()
    masters = [p.detach().clone().float().requires_grad_() for p in model.parameters()]
    opt = NpuFusedAdam(masters, lr=1e-3)
    combined = CombinedGrads(opt, {id(m): p for m, p in zip(masters, model.parameters())})
    x, y = data()[0]
    combined.prepare()
    (F.cross_entropy(model(x.half()).float(), y) * SCALE).backward()
    expected = [p.grad.float() / SCALE for p in model.parameters()]
    assert not combined.unscale(1.0 / SCALE)
    for m, want in zip(masters, expected):
        torch.testing.assert_close(m.grad, want, rtol=0, atol=0)
    unit = combined.units[0]
    assert is_combined_tensor_valid(unit.model_grad, [p.grad for p in model.parameters()])
    opt.step()
    combined.after_step()  # master gradients of fp16 parameters are cleared, memory kept
    assert all(float(m.grad.abs().sum()) == 0 for m in masters)
    assert combined.intact()


def test_backward_regions_are_what_backward_wrote():
    """combine_ddp averages (slice by slice, see ddp_overlap) what each backward writes."""
    torch.manual_seed(0)
    model = make_model()
    half = make_model().half()
    masters = [p.detach().clone().float().requires_grad_() for p in half.parameters()]
    x, y = data()[0]
    # fp32 model: its parameters are the masters, backward writes the whole master buffer.
    fp32 = CombinedGrads(torch.optim.SGD(model.parameters(), lr=0.1))
    F.cross_entropy(model(x), y).backward()
    fp32.build()
    [(buf, entries)] = fp32.regions()
    assert buf is fp32.units[0].grad
    assert [e[2] for e in entries] == list(model.parameters())
    assert [e[3] for e in entries] == list(range(len(entries)))
    # fp16 model with fp32 masters, except the last layer, which stays fp32 (as amp keeps
    # BatchNorm): as in Ascend's apex the masters of fp16 and of fp32 model parameters are two
    # buffers; backward writes the fp16 buffer beside the first and the second whole.
    head = list(half.children())[-1].float()
    masters[-2:] = list(head.parameters())
    mixed = CombinedGrads(
        torch.optim.SGD(masters, lr=0.1),
        {id(m): p for m, p in zip(masters[:-2], list(half.parameters())[:-2])},
    )
    F.cross_entropy(head(half[:-1](x.half()).float()), y).backward()
    mixed.build()
    (fp16, fp16_entries), (own, own_entries) = mixed.regions()
    assert fp16 is mixed.units[0].model_grad and own is mixed.units[1].grad
    assert [e[2] for e in fp16_entries] == list(half.parameters())[:-2]
    assert [e[2] for e in own_entries] == list(head.parameters())
    for offset, n, param, _ in own_entries:  # the head's gradients, in place in the buffer
        assert torch.equal(own[offset : offset + n], param.grad.reshape(-1))
    # Cut into slices of at least MIN_SLICE_ELEMENTS: these small buffers give one slice each,
    # the one whose parameters come last going out first.
    slices = ddp_overlap.cut(mixed.regions(), replica_count=4)
    assert [s.params for s in slices] == [list(head.parameters()), list(half.parameters())[:-2]]
    assert slices[1].view.data_ptr() == fp16.data_ptr()


def test_slices_cut_at_parameter_boundaries_in_backward_order():
    buf = torch.zeros(600_000)
    writers = [torch.zeros(1, requires_grad=True) for _ in range(6)]
    entries = [(i * 100_000, 100_000 - 32, w, i) for i, w in enumerate(writers)]
    slices = ddp_overlap.cut([(buf, entries)], replica_count=3)
    # 6 x ~100k elements in 3 slices of at least 200k: two parameters each, last first.
    index = {id(w): i for i, w in enumerate(writers)}
    assert [[index[id(p)] for p in s.params] for s in slices] == [[4, 5], [2, 3], [0, 1]]
    assert [(s.view.data_ptr() - buf.data_ptr()) // 4 for s in slices] == [400_000, 200_000, 0]
    assert [s.view.numel() for s in slices] == [200_000 - 32] * 3


def test_saturated_fp16_gradients_are_an_overflow(kernel_path):
    model = make_model().half()
    masters = [p.detach().clone().float().requires_grad_() for p in model.parameters()]
    opt = torch.optim.SGD(masters, lr=0.1)
    combined = CombinedGrads(opt, {id(m): p for m, p in zip(masters, model.parameters())})
    x, y = data()[0]
    combined.prepare()
    (F.cross_entropy(model(x.half()).float(), y) * 1e9).backward()
    combined.unscale(1e-9)
    assert loss_scaling.take_overflow()


def test_replaced_gradient_is_recombined():
    torch.manual_seed(0)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    combined = CombinedGrads(opt)
    x, y = data()[0]
    scaled_training_step(model, opt, combined, x, y)
    assert combined.intact()
    model.zero_grad(set_to_none=True)  # forced to keep memory while fused
    assert combined.intact()
    opt.zero_grad(set_to_none=True)  # torch's optimizer frees them: the fusion is rebuilt
    assert not combined.intact()
    scaled_training_step(model, opt, combined, x, y)
    assert combined.intact()


def test_unscale_tensors_when_the_stash_is_the_master_itself():
    # amp's O2 accumulation passes the existing master grads as both stash and destination.
    master = [torch.tensor([1.0, 2.0])]
    model = [torch.tensor([8.0, 16.0]).half()]
    assert not loss_scaling.unscale_tensors(model, master, 0.25, stashed=master)
    assert master[0].tolist() == [3.0, 6.0]


# --- the master-to-model copy after a step --------------------------------------------------------


def test_master_copy_writes_the_rounded_masters_as_data_copy_does():
    from apex.npu.amp.master_copy import MasterToModelCopy

    torch.manual_seed(0)
    models = [
        nn.Parameter(torch.zeros(3, 4, dtype=torch.float16)),
        nn.Parameter(torch.zeros(5, dtype=torch.float16)),
    ]
    masters = [torch.randn(3, 4) * 100, torch.randn(5)]
    versions = [p._version for p in models]
    copy_to_models = MasterToModelCopy()
    for step in range(2):  # the second call reuses the aliases of the first
        for m in masters:
            m.add_(1.0)
        copy_to_models(models, masters)
        for p, m in zip(models, masters):
            assert torch.equal(p.detach(), m.half()), step
    # Written through aliases, as upstream's ``model.data.copy_(master.data)``: autograd sees no
    # in-place change of the parameters.
    assert [p._version for p in models] == versions

    # New memory on either side (a master re-pointed, a parameter given new data) is followed.
    masters[0].data = torch.randn(3, 4)
    models[1].data = torch.zeros(5, dtype=torch.float16)
    copy_to_models(models, masters)
    for p, m in zip(models, masters):
        assert torch.equal(p.detach(), m.half())


def test_master_copy_copies_pair_by_pair_where_the_backend_has_no_foreach_copy(monkeypatch):
    from apex.npu.amp import master_copy

    def refuse(*args):
        raise NotImplementedError(
            "Could not run 'aten::_foreach_copy_' with arguments from the 'PrivateUse1' backend"
        )

    monkeypatch.setattr(torch, "_foreach_copy_", refuse, raising=False)
    monkeypatch.setattr(master_copy, "_foreach_copy_works", [True])
    models = [nn.Parameter(torch.zeros(4, dtype=torch.float16)) for _ in range(3)]
    masters = [torch.randn(4) for _ in range(3)]
    copy_to_models = master_copy.MasterToModelCopy()
    for _ in range(2):  # refused once, then not tried again
        copy_to_models(models, masters)
        assert all(torch.equal(p.detach(), m.half()) for p, m in zip(models, masters))
    assert master_copy._foreach_copy_works == [False]
