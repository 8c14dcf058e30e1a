"""torch's meta device beside the emulated NPU: checkpoints loaded with
``map_location="meta"``, NPU tensors and modules moved to meta, fp16 arithmetic on meta tensors
under the emulation, and the deferred initialisation of FSDP and accelerate (a model built on
meta, ``to_empty(device="npu")``, then filled by ``reset_parameters`` or a state dict). A meta
tensor is on no NPU; everything is compared with what plain torch gives for the host."""

import io

import pytest
import torch
import torch.nn as nn

from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401
from torch_npu._device import placement  # noqa: E402

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


@pytest.fixture(autouse=True)
def on_npu0():
    torch.npu.set_device(0)
    yield
    torch.npu.set_device(0)


def saved(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return buffer


def assert_meta(t, like):
    assert t.is_meta and t.device.type == "meta", t.device
    assert placement.npu_of(t) is None and not t.is_npu
    assert t.shape == like.shape and t.dtype == like.dtype


@pytest.mark.parametrize(
    "map_location", ["meta", torch.device("meta"), {"npu:1": "meta"}], ids=["str", "device", "dict"]
)
def test_load_npu_checkpoint_to_meta(map_location):
    state = {
        "w": torch.randn(3, 4).npu(1),
        "h": torch.randn(5).half().npu(1),
        "step": torch.tensor(7).npu(1),
    }
    loaded = torch.load(saved(state), map_location=map_location)
    for name, value in state.items():
        assert_meta(loaded[name], value)
    back = torch.load(saved(state))  # without a map: where it was saved, with its values
    assert back["w"].device == torch.device("npu:1") and torch.equal(
        back["w"].cpu(), state["w"].cpu()
    )


def test_load_host_checkpoint_to_meta_and_dict_keeps_the_rest():
    state = {"w": torch.randn(2, 2), "v": torch.randn(3).npu()}
    loaded = torch.load(saved(state), map_location="meta")
    assert_meta(loaded["w"], state["w"])
    assert_meta(loaded["v"], state["v"])
    mixed = torch.load(saved(state), map_location={"cpu": "meta"})
    assert_meta(mixed["w"], state["w"])
    assert mixed["v"].device == torch.device("npu:0")  # not named by the map: as saved
    assert torch.equal(mixed["v"].cpu(), state["v"].cpu())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_npu_tensors_to_meta(dtype):
    x = torch.randn(4, 3).to(dtype).npu()
    for made in (
        x.to("meta"),
        x.to(torch.device("meta")),
        torch.empty_like(x, device="meta"),
        x.new_empty((4, 3), device="meta"),
    ):
        assert_meta(made, x)
    assert x.is_npu  # the source stays where it was
    with pytest.raises(NotImplementedError, match="meta tensor"):  # torch's own refusal
        x.to("meta").to("npu")


def test_fp16_arithmetic_on_meta_tensors_gives_torch_metadata():
    torch.randn(1).npu()  # the emulation is on in this thread
    a = torch.empty(8, 16, dtype=torch.float16, device="meta")
    b = torch.empty(16, 4, dtype=torch.float16, device="meta")
    out = torch.softmax(a @ b, dim=-1) * 2 + 1
    assert out.is_meta and out.shape == (8, 4) and out.dtype == torch.float16
    layer = nn.Linear(16, 4, device="meta", dtype=torch.float16)
    y = layer(a)
    y.sum().backward()  # autograd's shapes only
    assert layer.weight.grad.is_meta and layer.weight.grad.shape == (4, 16)


def test_npu_module_to_meta_and_to_empty_meta():
    model = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5)).npu().half()
    model.to("meta")
    for t in list(model.parameters()) + list(model.buffers()):
        assert t.is_meta and not t.is_npu
    other = nn.Linear(3, 5).npu()
    other.to_empty(device="meta")
    assert_meta(other.weight, torch.empty(5, 3))


def build_meta(factory):
    if TORCH2:
        with torch.device("meta"):
            return factory()
    return factory(device="meta")  # torch 1.13 has no device context


def small_model(device=None):
    return nn.Sequential(
        nn.Linear(6, 8, device=device),
        nn.LayerNorm(8, device=device),
        nn.Linear(8, 2, device=device),
    )


@pytest.mark.parametrize("device", ["npu", "npu:1", torch.device("npu", 1)])
def test_meta_init_then_to_empty_npu_then_load_state_dict(device):
    torch.manual_seed(0)
    reference = small_model()
    model = build_meta(small_model)
    assert all(p.is_meta for p in model.parameters())
    model.to_empty(device=device)
    want = (
        torch.device(device)
        if not isinstance(device, str) or ":" in device
        else torch.device("npu:0")
    )
    for p in model.parameters():
        assert p.device == want and p.is_npu
    model.load_state_dict(reference.state_dict())
    x = torch.randn(5, 6)
    got = model(x.to(want))
    assert got.device == want
    torch.testing.assert_close(got.cpu(), reference(x), rtol=0, atol=0)


def test_meta_checkpoint_then_assign_the_real_state():
    """The FastChat pattern: shapes from a checkpoint loaded on meta, the module built from
    them, then the real weights loaded onto its NPU."""
    torch.manual_seed(1)
    reference = small_model().npu()
    buffer = saved(reference.state_dict())
    shapes = torch.load(buffer, map_location="meta")
    model = build_meta(small_model)
    for name, t in model.state_dict().items():
        assert t.shape == shapes[name].shape and shapes[name].is_meta
    model.to_empty(device="npu")
    buffer.seek(0)
    model.load_state_dict(torch.load(buffer, map_location="npu"))
    x = torch.randn(3, 6).npu()
    torch.testing.assert_close(model(x).cpu(), reference(x).cpu(), rtol=0, atol=0)


def test_to_empty_npu_then_reset_parameters_trains():
    torch.manual_seed(2)
    model = build_meta(small_model)
    model.to_empty(device="npu")
    for module in model:
        module.reset_parameters()
    assert all(torch.isfinite(p.cpu()).all() for p in model.parameters())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 6).npu(), torch.randn(32, 2).npu()
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
