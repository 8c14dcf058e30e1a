"""NPU tensors and their makers on the emulated NPU, as torch_npu makes them: torch 2.x's device
context (``with torch.device(...)``, ``torch.set_default_device``), int device indices, pinned
host memory, ``empty_with_format``, ``type_as``, the memory formats torch_npu refuses, and, on
torch 1.x, named tensors and torch_npu 1.x's ``torch.device`` constructor. Values are compared
with the same call made on the host."""

import io
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch.nn as nn

from overlay_support import overlay_env, use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401
from torch_npu._device import pinned, torch_device  # noqa: E402

NATIVE = torch_device.NATIVE  # torch 2.x
HAS_DEVICE_CONTEXT = hasattr(torch, "set_default_device")
HAS_NAMED_TENSORS = hasattr(torch.Tensor, "rename")
needs_context = pytest.mark.skipif(
    not HAS_DEVICE_CONTEXT, reason="torch 1.13 has no device context"
)


@pytest.fixture(autouse=True)
def on_npu0():
    torch.npu.set_device(0)
    yield
    torch.npu.set_device(0)


def run_child(code, **env_changes):
    env = overlay_env()
    env.update(env_changes)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split()


# --- torch 2.x's device context ----------------------------------------------------------------


@needs_context
@pytest.mark.parametrize("spec,index", [("npu", 0), ("npu:1", 1), (torch.device("npu", 2), 2)])
def test_makers_and_modules_in_a_device_context_are_on_that_npu(spec, index):
    torch.manual_seed(0)
    with torch.device(spec):
        made = [
            torch.zeros(2, 3),
            torch.ones(4),
            torch.tensor([1.0, 2.0]),
            torch.arange(5),
            torch.full((2,), 7.0),
            torch.randn(3),
            torch.empty(2, 2),
        ]
        layer = nn.Linear(4, 3)
        explicit = torch.zeros(2, device="cpu")
    for t in made + [layer.weight, layer.bias]:
        assert t.is_npu and t.device == torch.device("npu", index), t.device
    assert explicit.device.type == "cpu"  # a device the call names wins
    assert torch.equal(made[2].cpu(), torch.tensor([1.0, 2.0]))
    assert torch.zeros(2).device.type == "cpu"  # and the context ends with the block
    x = torch.randn(4, 4)
    assert torch.allclose(
        layer(x.to(layer.weight.device)).cpu(),
        x @ layer.weight.detach().cpu().t() + layer.bias.detach().cpu(),
    )


@needs_context
def test_a_device_context_follows_the_current_npu_when_it_names_none():
    torch.npu.set_device(3)
    with torch.device("npu"):
        assert torch.zeros(1).device == torch.device("npu", 3)


@needs_context
def test_meta_device_context_makes_meta_tensors_under_the_emulation():
    with torch.device("meta"):
        layer = nn.Linear(32, 8)
        t = torch.empty(5, 5)
    assert layer.weight.device.type == "meta" and t.is_meta and not t.is_npu
    assert layer.weight.shape == (8, 32)


@needs_context
def test_set_default_device_npu_until_reset():
    try:
        torch.set_default_device("npu")
        assert torch.tensor(1).device == torch.device("npu", 0)
        assert nn.Linear(2, 2).weight.is_npu
        assert torch.zeros_like(torch.zeros(2, device="cpu")).device.type == "cpu"  # like input
    finally:
        torch.set_default_device(None)
    assert torch.tensor(1).device.type == "cpu"


# --- int device indices ------------------------------------------------------------------------


def test_int_device_indices_mean_npus():
    host = torch.arange(6.0).reshape(2, 3)
    assert host.to(0).device == torch.device("npu", 0)
    assert host.to(device=1).device == torch.device("npu", 1)
    assert host.to(2, torch.float16).dtype == torch.float16
    assert torch.tensor(1, device=0).device == torch.device("npu", 0)
    z = torch.zeros(2, device=1)
    assert z.device == torch.device("npu", 1) and not z.cpu().any()
    layer = nn.Linear(3, 2).to(0)
    assert layer.weight.device == torch.device("npu", 0)
    assert torch.equal(host.to(1).cpu(), host)
    with pytest.raises(RuntimeError, match="npu:8 does not exist"):
        torch.zeros(2, device=8)
    with pytest.raises(RuntimeError, match="must not be negative"):
        host.to(-1)


# --- pinned host memory -------------------------------------------------------------------------


def test_pin_memory_gives_pinned_host_memory_with_the_same_values():
    x = torch.randn(10, 20)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and not p.is_npu and torch.equal(p, x) and p.data_ptr() != x.data_ptr()
    assert p.pin_memory() is p  # already pinned
    assert p[2:5].is_pinned() and p.t().is_pinned()  # views of pinned memory are pinned
    assert not p.clone().is_pinned()
    t = torch.arange(10).view(2, 5).t()
    assert torch.equal(t.pin_memory(), t)  # non-contiguous


@pytest.mark.parametrize(
    "make,filled",
    [
        (lambda **k: torch.empty(3, 4, **k), False),
        (lambda **k: torch.zeros(3, 4, **k), True),
        (lambda **k: torch.ones(5, dtype=torch.float16, **k), True),
        (lambda **k: torch.full((2,), 3, **k), True),
        (lambda **k: torch.tensor([1, 2, 3], **k), True),
        (lambda **k: torch.arange(6, **k), True),
        (lambda **k: torch.empty(0, **k), False),
    ],
)
def test_makers_with_pin_memory(make, filled):
    pinned_made, plain = make(pin_memory=True), make()
    assert pinned_made.is_pinned() == (plain.numel() > 0)  # (an empty tensor holds no block)
    assert pinned_made.shape == plain.shape and pinned_made.dtype == plain.dtype
    if filled:
        assert torch.equal(pinned_made, plain)


def test_pinned_blocks_are_reused_after_they_are_freed():
    t = torch.FloatTensor([1]).pin_memory()
    address = t.data_ptr()
    del t
    t = torch.FloatTensor([1]).pin_memory()
    assert t.data_ptr() == address
    other = torch.FloatTensor([2]).pin_memory()  # while t lives, a block of its own
    assert other.data_ptr() != address and other.is_pinned()


def test_npu_tensors_are_never_pinned():
    x = torch.ones(3).npu()
    assert not x.is_pinned()
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        x.pin_memory()
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        torch.zeros(2, device="npu", pin_memory=True)


@pytest.mark.parametrize("non_blocking", [False, True])
def test_a_non_blocking_copy_to_the_host_lands_in_pinned_memory(non_blocking):
    src = torch.randn(100).npu()
    out = src.to("cpu", non_blocking=non_blocking)
    assert out.is_pinned() == non_blocking and torch.equal(out, src.cpu())
    back = out.to("npu", non_blocking=non_blocking)
    assert not back.is_pinned() and back.is_npu
    converted = src.to(device="cpu", dtype=torch.float64, non_blocking=non_blocking)
    assert converted.is_pinned() == non_blocking and converted.dtype == torch.float64


def test_pinned_copies_keep_autograd():
    x = torch.randn(4, requires_grad=True)
    (x.pin_memory() * 3).sum().backward()
    assert torch.equal(x.grad, torch.full((4,), 3.0))


def test_data_loader_pins_its_batches():
    data = torch.utils.data.TensorDataset(torch.arange(20.0).view(10, 2), torch.arange(10))
    kwargs = {} if NATIVE else {"pin_memory_device": "npu"}  # torch 1.13 needs the device
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loader = torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True, **kwargs)
        batches = list(loader)
    assert all(x.is_pinned() and y.is_pinned() for x, y in batches)
    assert torch.equal(torch.cat([x for x, _ in batches]), torch.arange(20.0).view(10, 2))


def test_the_pinned_cache_can_be_emptied():
    t = torch.zeros(1000).pin_memory()
    del t
    pinned.empty_cache()
    assert torch.zeros(1000).pin_memory().is_pinned()


# --- empty_with_format --------------------------------------------------------------------------


def test_empty_with_format_makes_an_npu_tensor_in_that_format():
    x = torch_npu.empty_with_format((2, 3), dtype=torch.float32, device="npu")
    assert x.is_npu and x.shape == (2, 3) and x.dtype == torch.float32
    assert torch_npu.get_npu_format(x) == 2 and (x + 1).is_npu
    nz = torch_npu.empty_with_format((3, 5), dtype=torch.float16, device="npu:1", acl_format=29)
    assert nz.device == torch.device("npu", 1) and torch_npu.get_npu_format(nz) == 29
    assert torch_npu.get_storage_size(nz) == 16 * 16  # FRACTAL_NZ's 16x16 fractal
    with pytest.raises(RuntimeError, match="Expected NPU tensor"):
        torch_npu.empty_with_format((2, 3))
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        torch_npu.empty_with_format((2, 3), device="npu", pin_memory=True)


def test_torch_empty_with_format_is_torch_npu_1_x_s():
    if NATIVE:
        assert not hasattr(torch, "empty_with_format")  # torch_npu 2.x has only its own
        return
    with pytest.warns(FutureWarning, match="Use torch_npu.empty_with_format"):
        x = torch.empty_with_format((2, 3), dtype=torch.float32, device="npu")
    assert x.is_npu and x.shape == (2, 3)


# --- type_as ------------------------------------------------------------------------------------


def test_type_as_takes_the_other_tensor_s_device_and_dtype():
    host = torch.arange(6.0).reshape(2, 3)
    npu_half = torch.zeros(1, dtype=torch.float16).npu(1)
    moved = host.type_as(npu_half)
    assert moved.device == npu_half.device and moved.dtype == torch.float16
    assert torch.equal(moved.cpu(), host.half())
    back = moved.type_as(host)
    assert back.device.type == "cpu" and back.dtype == torch.float32
    assert moved.type_as(npu_half) is moved
    index = torch.tensor([2, 0]).type_as(torch.zeros(1, dtype=torch.long).npu(1))
    assert torch.equal(
        npu_half.new_tensor([1.0, 2.0, 3.0]).index_select(0, index).cpu(),
        torch.tensor([3.0, 1.0], dtype=torch.float16),
    )
    leaf = torch.randn(3, requires_grad=True)
    leaf.type_as(npu_half).float().sum().backward()
    assert torch.equal(leaf.grad, torch.ones(3)) and leaf.grad.device.type == "cpu"


# --- memory formats -----------------------------------------------------------------------------


def test_npu_tensors_are_not_made_channels_last():
    with pytest.raises(
        RuntimeError,
        match=r"Only c10::MemoryFormat::Contiguous is supported for "
        r"creating a npu tensor(.|\n)*ERR01007",
    ):
        torch.empty(2, 3, 4, 4, device="npu", memory_format=torch.channels_last)
    x = torch.randn(2, 3, 4, 4)
    with pytest.raises(RuntimeError, match="Only c10::MemoryFormat::Contiguous is supported"):
        x.to("npu", memory_format=torch.channels_last)
    on_npu = x.npu()
    copy_refusal = (
        "Only contiguous_format or preserve_format is supported."
        if NATIVE
        else "NPU not support specify memory_format."
    )
    with pytest.raises(RuntimeError, match=copy_refusal):
        on_npu.to(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match=copy_refusal):
        nn.Conv2d(3, 2, 3).npu().to(memory_format=torch.channels_last)
    assert on_npu.to(memory_format=torch.contiguous_format) is on_npu
    assert x.to(memory_format=torch.channels_last).is_contiguous(
        memory_format=torch.channels_last
    )  # host tensors are torch's


def test_contiguous_of_an_npu_tensor_refuses_other_formats():
    x = torch.randn(1, 16, 5, 5).npu()
    assert x.contiguous(memory_format=torch.preserve_format) is x
    for fmt in (torch.channels_last, torch.channels_last_3d):
        with pytest.raises(
            RuntimeError,
            match="NPU contiguous operator only support+ed contiguous memory format(.|\n)*ERR01007",
        ):
            x.contiguous(memory_format=fmt)
    p = x.permute(0, 2, 1, 3)
    with pytest.raises(RuntimeError, match="contiguous memory format"):
        p.contiguous(memory_format=torch.preserve_format)
    assert p.contiguous().is_contiguous() and torch.equal(p.contiguous().cpu(), p.cpu())
    square = torch.randn(1, 3, 1, 1).npu()  # contiguous in both: itself
    assert square.contiguous(memory_format=torch.channels_last) is square


def test_tensors_made_like_an_npu_tensor_in_channels_last_are_contiguous():
    x = torch.randn(2, 3, 4, 4).npu()
    for make in (torch.empty_like, torch.zeros_like, torch.ones_like, torch.rand_like):
        out = make(x, memory_format=torch.channels_last)
        assert out.is_npu and out.is_contiguous() and out.shape == x.shape
    assert torch.equal(
        torch.ones_like(x, memory_format=torch.channels_last).cpu(), torch.ones(2, 3, 4, 4)
    )
    t = torch.empty(16, 32).npu().t()  # preserve keeps strides, as torch_npu's empty_like
    assert torch.empty_like(t).stride() == (1, 32)


# --- torch 1.x: named tensors and torch_npu 1.x's torch.device ----------------------------------

needs_names = pytest.mark.skipif(not HAS_NAMED_TENSORS, reason="this torch has no named tensors")


@needs_names
def test_max_over_a_named_dimension_of_an_npu_tensor():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "named tensors are experimental"
        host = torch.randn(2, 3, 4, names=("N", "C", "H"))
        x = host.npu()
        values, indices = torch.max(x, "C")
        by_index = torch.max(x, 1, keepdim=True)
        made = torch.zeros(2, 2, names=("A", "B"), device="npu")
        renamed = torch.randn(2, 2).npu()
        renamed.names = ("A", "B")
    want_values, want_indices = torch.max(host.rename(None), 1)
    assert x.is_npu and x.names == ("N", "C", "H")
    assert values.names == ("N", "H") and values.is_npu and indices.is_npu
    assert torch.equal(values.rename(None).cpu(), want_values)
    assert torch.equal(indices.rename(None).cpu(), want_indices)
    assert by_index[0].names == ("N", "C", "H") and by_index[0].is_npu
    assert made.is_npu and made.names == ("A", "B") and (made + 1).is_npu
    assert renamed.names == ("A", "B") and (renamed * 2).names == ("A", "B")
    assert "names=('N', 'C', 'H')" in repr(x) and "npu:0" in repr(x)


@needs_names
def test_a_tensor_without_names_again_takes_the_npu_s_fp16_arithmetic():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = torch.full((2,), 60000.0, dtype=torch.float16).npu()
        named = x.rename("N")
        plain = named.rename(None)
    assert type(plain) is torch.Tensor and plain.is_npu
    assert torch.equal((plain + plain).cpu(), torch.full((2,), 65504.0, dtype=torch.float16))


@pytest.mark.skipif(NATIVE, reason="torch 2.x's own torch.device")
def test_torch_device_reads_one_device_as_torch_npu_1_x_does():
    assert torch.device(device=torch.device("npu:0")) == torch.device("npu", 0)
    assert torch.device(device="npu:1").index == 1
    assert torch.device(None).type == "cpu" and torch.device(device=None).type == "cpu"
    assert torch.device(2) == torch.device("npu", 2)
    xla = torch._C.device("xla:0")
    assert torch.device(xla) == torch.device("npu", 0) and not isinstance(xla, torch.device)
    assert torch.new_device(torch._C.device("xla:3")) == torch.device("npu", 3)
    assert isinstance(torch.device("cpu"), torch.device)
    with pytest.raises(RuntimeError, match="must not be negative"):
        torch.device(-1)


def test_checkpoints_of_pinned_and_npu_tensors_load_where_they_were():
    state = {"pinned": torch.arange(4.0).pin_memory(), "npu": torch.arange(3.0).npu(1)}
    buf = io.BytesIO()
    torch.save(state, buf)
    buf.seek(0)
    loaded = torch.load(buf)
    assert loaded["npu"].device == torch.device("npu", 1)
    assert loaded["pinned"].device.type == "cpu" and torch.equal(loaded["pinned"], state["pinned"])


@needs_context
def test_cuda_device_contexts_mean_the_npu_under_transfer_to_npu():
    out = run_child("""
        import warnings
        import torch, torch_npu
        from torch_npu.contrib import transfer_to_npu
        with torch.device("cuda"):
            a = torch.tensor(1)
        torch.set_default_device("cuda:1")
        b = torch.zeros(2)
        torch.set_default_device(None)
        data = torch.utils.data.TensorDataset(torch.arange(6.0).view(3, 2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            batch, = next(iter(torch.utils.data.DataLoader(data, pin_memory=True,
                                                           pin_memory_device="cuda")))
        print(a.device, b.device, batch.is_pinned(), torch.zeros(1).device)
    """)
    assert out == ["npu:0", "npu:1", "True", "cpu"]


@pytest.mark.skipif(
    not hasattr(torch.UntypedStorage, "to"), reason="torch 1.13's storages have no to()"
)
def test_a_callable_map_location_puts_the_storages_it_moves_on_that_npu():
    """torch's storage.to(device="npu:0") would ask for an NPU allocator (and crash): on the
    emulated NPU it is a host copy, and torch.load puts its tensors on that NPU."""
    host = torch.arange(5.0)
    moved = host.untyped_storage().to(device="npu:1")
    assert moved.device.type == "cpu" and moved.data_ptr() != host.data_ptr()
    buf = io.BytesIO()
    torch.save({"a": host, "b": torch.ones(2)}, buf)
    for to_npu, where in ((True, "npu:1"), (False, "cpu")):
        buf.seek(0)
        loaded = torch.load(
            buf, map_location=lambda storage, loc: storage.to(device="npu:1") if to_npu else storage
        )
        assert str(loaded["a"].device) == where and torch.equal(loaded["a"].cpu(), host)
