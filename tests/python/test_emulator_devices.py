"""The emulated NPU's devices: ``torch.device("npu:N")``, factories, ``Tensor.npu/to/cpu``, NPU
tensor identity (``is_npu``, ``device``, ``type()``), modules, checkpoints, DDP's device ids and
``torch.npu``. Every NPU result is compared with the same call made on the host."""

import copy
import io
import os
import pickle
import subprocess
import sys
import textwrap
import threading
import time

import pytest
import torch
import torch.nn as nn

from overlay_support import overlay_env, use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401
from torch_npu._device import factories, torch_device  # noqa: E402
from torch_npu._fp16 import float_status  # noqa: E402

TORCH_BEFORE_2_1 = tuple(int(part) for part in torch.__version__.split(".")[:2]) < (2, 1)


@pytest.fixture(autouse=True)
def on_npu0():
    torch.npu.set_device(0)
    yield
    torch.npu.set_device(0)
    torch.set_default_tensor_type(torch.FloatTensor)


def run_child(code, **env_changes):
    env = overlay_env()
    env.update(env_changes)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


# --- torch.device ------------------------------------------------------------------------------


def test_torch_device_names_npus():
    assert str(torch.device("npu:3")) == "npu:3"
    assert repr(torch.device("npu", 2)) == "device(type='npu', index=2)"
    assert repr(torch.device(type="npu")) == "device(type='npu')"
    d = torch.device("npu:1")
    assert d.type == "npu" and d.index == 1
    assert torch.device("npu").index is None
    assert isinstance(d, torch.device) and isinstance(torch.device("cpu"), torch.device)
    assert torch.device("npu:1") == torch.device("npu", 1) != torch.device("npu:0")
    assert torch.device("npu:0") != torch.device("cpu") and torch.device("cpu") != d
    assert {torch.device("npu:1"): "x"}[torch.device("npu", 1)] == "x"
    assert pickle.loads(pickle.dumps(d)) == d
    assert torch.device("cpu").type == "cpu" and torch.device("cuda", 0).type == "cuda"
    with pytest.raises(AttributeError):
        d.index = 4


@pytest.mark.parametrize(
    "spec,match",
    [
        ("npu:x", "(?i)invalid device string"),
        ("npu:8", "npu:8 does not exist.*npu:0 to npu:7"),
        ("npu:9", "APEXNPU_DEVICE_COUNT"),
    ],
)
def test_bad_npu_names_are_clear_errors(spec, match):
    if torch_device.NATIVE and spec != "npu:x":
        # torch 2.x's own torch.device, as for CUDA, names any index; using it is the error.
        assert torch.device(spec).index == int(spec[4:])
    else:
        with pytest.raises(RuntimeError, match=match):
            torch.device(spec)
    with pytest.raises(RuntimeError, match="torch.zeros: .*" if "exist" in match else match):
        torch.zeros(2, device=spec)


def test_torchscript_still_compiles_device_annotations():
    @torch.jit.script
    def move(x: torch.Tensor, d: torch.device) -> torch.Tensor:
        return x.to(d)

    assert move(torch.ones(2), torch.device("cpu")).tolist() == [1.0, 1.0]


def test_device_count_is_eight_and_settable():
    assert torch.npu.device_count() == 8
    proc = run_child(
        "import torch_npu, torch; print(torch.npu.device_count()); "
        "torch.zeros(1, device='npu:1'); torch.zeros(1, device='npu:2')",
        APEXNPU_DEVICE_COUNT="2",
    )
    assert proc.stdout.split() == ["2"]
    assert proc.returncode != 0 and "torch.zeros: npu:2 does not exist" in proc.stderr
    bad = run_child(
        "import torch_npu, torch; torch.npu.device_count()", APEXNPU_DEVICE_COUNT="lots"
    )
    assert bad.returncode != 0 and "APEXNPU_DEVICE_COUNT='lots'" in bad.stderr


def test_current_device_belongs_to_the_thread():
    torch.npu.set_device("npu:5")
    seen = []
    t = threading.Thread(
        target=lambda: seen.append(
            (torch.npu.current_device(), torch.zeros(1, device="npu").device)
        )
    )
    t.start()
    t.join()
    assert torch.npu.current_device() == 5
    assert seen == [(0, torch.device("npu:0"))]
    with torch.npu.device(2):
        assert torch.npu.current_device() == 2
        assert torch.ones(1).npu().device == torch.device("npu:2")
    assert torch.npu.current_device() == 5
    torch.npu.set_device(torch.device("npu:4"))
    assert torch.npu.current_device() == 4
    with pytest.raises(ValueError, match="Expected a npu device, but got: cuda:0"):
        torch.npu.set_device("cuda:0")  # torch_npu's words


# --- makers ------------------------------------------------------------------------------------


def test_every_maker_with_a_device_argument_is_wrapped():
    names = factories.wrapped_names()
    for name in (
        "zeros",
        "ones",
        "empty",
        "full",
        "rand",
        "randn",
        "randint",
        "randperm",
        "arange",
        "range",
        "linspace",
        "logspace",
        "eye",
        "tensor",
        "as_tensor",
        "asarray",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "rand_like",
        "randn_like",
        "randint_like",
        "empty_strided",
        "scalar_tensor",
        "tril_indices",
        "hann_window",
        "sparse_coo_tensor",
    ):
        assert "torch." + name in names["functions"], name
    assert "torch.fft.fftfreq" in names["functions"]
    for name in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "new"):
        assert name in names["methods"]


MAKERS = {
    "zeros": lambda d: torch.zeros(2, 3, device=d),
    "ones": lambda d: torch.ones(4, device=d, dtype=torch.float16),
    "full": lambda d: torch.full((2,), 7.0, device=d),
    "empty": lambda d: torch.empty(5, device=d).fill_(1.0),
    "rand": lambda d: torch.rand(3, device=d, generator=torch.Generator().manual_seed(1)),
    "randn": lambda d: torch.randn(3, device=d, generator=torch.Generator().manual_seed(1)),
    "randint": lambda d: torch.randint(
        0, 9, (4,), device=d, generator=torch.Generator().manual_seed(2)
    ),
    "randperm": lambda d: torch.randperm(6, device=d, generator=torch.Generator().manual_seed(3)),
    "arange": lambda d: torch.arange(1, 7, 2, device=d),
    "linspace": lambda d: torch.linspace(0, 1, 5, device=d),
    "logspace": lambda d: torch.logspace(0, 2, 3, device=d),
    "eye": lambda d: torch.eye(3, device=d),
    "tensor": lambda d: torch.tensor([[1, 2], [3, 4]], device=d),
    "as_tensor": lambda d: torch.as_tensor([1.5, 2.5], device=d),
    "scalar_tensor": lambda d: torch.scalar_tensor(3.0, device=d),
    "tril_indices": lambda d: torch.tril_indices(3, 3, device=d),
    "hann_window": lambda d: torch.hann_window(4, device=d),
    "fftfreq": lambda d: torch.fft.fftfreq(4, device=d),
}


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("spec", ["npu", "npu:3", torch.device("npu:6")])
def test_makers_put_their_result_on_the_npu(name, spec):
    on_npu = MAKERS[name](spec)
    on_host = MAKERS[name]("cpu")
    want = 0 if spec == "npu" else torch.device(spec).index
    assert on_npu.is_npu and on_npu.device == torch.device("npu", want)
    assert not on_host.is_npu and on_host.device == torch.device("cpu")
    assert on_npu.dtype == on_host.dtype and torch.equal(on_npu.cpu(), on_host)


def test_like_and_new_makers_follow_their_input_unless_told_otherwise():
    x = torch.ones(2, 2, device="npu:2")
    for made in (
        torch.zeros_like(x),
        torch.ones_like(x),
        torch.empty_like(x),
        torch.full_like(x, 3.0),
        torch.randn_like(x),
        x.new_zeros(3),
        x.new_ones(1),
        x.new_empty(2),
        x.new_full((2,), 1.0),
        x.new_tensor([1.0]),
        x.new(3),
    ):
        assert made.device == torch.device("npu:2")
    assert torch.zeros_like(x, device="cpu").device == torch.device("cpu")
    assert x.new_zeros(2, device="cpu").device == torch.device("cpu")
    assert x.new_tensor([1.0], device="npu:4").device == torch.device("npu:4")
    assert torch.zeros_like(torch.ones(2), device="npu:1").device == torch.device("npu:1")
    assert torch.ones(2).new_tensor([1.0]).device == torch.device("cpu")


def test_modules_built_with_a_device_are_on_it():
    lin = nn.Linear(3, 2, device="npu:1", dtype=torch.float16)
    assert lin.weight.device == torch.device("npu:1") and lin.weight.dtype == torch.float16
    assert isinstance(lin.weight, nn.Parameter) and lin.bias.is_npu


def test_default_tensor_type_on_the_npu():
    torch.npu.set_device(1)
    torch.set_default_tensor_type(torch.npu.FloatTensor)
    assert torch.zeros(2).device == torch.device("npu:1")
    assert torch.randn(2).type() == "torch.npu.FloatTensor"
    assert nn.Linear(2, 2).weight.device == torch.device("npu:1")
    assert torch.zeros(2, device="cpu").device == torch.device("cpu")
    torch.set_default_tensor_type("torch.npu.DoubleTensor")
    assert torch.zeros(1).type() == "torch.npu.DoubleTensor"
    torch.set_default_tensor_type(torch.FloatTensor)
    assert torch.zeros(2).device == torch.device("cpu")


# --- tensors -----------------------------------------------------------------------------------


def test_npu_to_and_cpu_move_like_torch_moves_between_devices():
    x = torch.arange(6.0).view(2, 3)
    y = x.npu()
    assert y is not x and y.is_npu and not x.is_npu and torch.equal(y.cpu(), x)
    assert y.npu() is y and y.to("npu:0") is y and y.to(torch.device("npu", 0)) is y
    z = y.to("npu:1")
    assert z is not y and z.device == torch.device("npu:1")
    assert y.cpu() is not y and not y.cpu().is_npu and x.cpu() is x and x.to("cpu") is x
    assert y.to("cpu").device == torch.device("cpu")
    y.add_(1)
    assert torch.equal(x, torch.arange(6.0).view(2, 3))  # a copy, not a view of the host tensor
    h = x.to("npu:2", torch.float16, non_blocking=True)
    assert h.dtype == torch.float16 and h.device == torch.device("npu:2")
    assert x.to(device="npu", dtype=torch.float64).type() == "torch.npu.DoubleTensor"
    assert x.to(z).device == torch.device("npu:1") and z.to(x).device == torch.device("cpu")
    assert x.npu(3).device == torch.device("npu:3") and x.npu("npu:4").device.index == 4
    with pytest.raises(RuntimeError, match="Tensor.npu: npu:8 does not exist"):
        x.npu(8)


def test_npu_of_another_device_is_refused_as_torch_npu_refuses_it():
    for device in ("cpu", "cpu:0", torch.device("cpu")):
        with pytest.raises(RuntimeError, match="^Invalid device, must be npu device$"):
            torch.ones(2).npu(device)
        with pytest.raises(RuntimeError, match="^Invalid device, must be npu device$"):
            nn.Linear(2, 2).npu(device)
    assert torch.ones(2).npu("npu:1").device == torch.device("npu:1")


def test_type_names_and_casts():
    x = torch.ones(3).npu()
    assert x.type() == "torch.npu.FloatTensor" and x.half().type() == "torch.npu.HalfTensor"
    assert x.int().type() == "torch.npu.IntTensor" and x.cpu().type() == "torch.FloatTensor"
    assert x.type(torch.npu.HalfTensor).type() == "torch.npu.HalfTensor"
    assert x.type("torch.npu.DoubleTensor").dtype == torch.float64
    assert x.type(torch.float16).type() == "torch.npu.HalfTensor"
    host = x.type("torch.HalfTensor")
    assert host.type() == "torch.HalfTensor" and not host.is_npu
    assert x.type(torch.FloatTensor).device == torch.device("cpu")
    assert torch.ones(2).type(torch.npu.FloatTensor).device == torch.device("npu:0")
    assert isinstance(x, torch.npu.FloatTensor) and not isinstance(x, torch.npu.HalfTensor)
    assert not isinstance(x.cpu(), torch.npu.FloatTensor)
    made = torch.npu.HalfTensor([1, 2])
    assert made.type() == "torch.npu.HalfTensor" and made.tolist() == [1.0, 2.0]
    assert torch.npu.FloatTensor(2, 3).shape == (2, 3)


@pytest.mark.skipif(
    int(torch.__version__.split(".")[0]) < 2, reason="torch 1.13 has no NPU typed storages"
)
@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_legacy_storage_types_are_the_npu_s():
    made = torch.npu.BoolStorage([True, False, True])
    assert made.dtype == torch.bool and made.tolist() == [True, False, True]
    assert isinstance(made, torch.npu.BoolStorage) and made.element_size() == 1
    assert torch.npu.FloatStorage().size() == 0 and torch.npu.LongStorage(3).size() == 3
    assert torch.npu.HalfStorage(2).dtype == torch.float16
    with pytest.raises(IndexError):
        made[3]
    x = torch.tensor([1.0, 2.0]).npu()
    assert isinstance(x.storage(), torch.npu.FloatStorage)
    assert not isinstance(x.storage(), torch.npu.HalfStorage)
    assert not isinstance(torch.ones(2).storage(), torch.npu.FloatStorage)
    on_npu = torch.tensor([], device="npu").set_(torch.npu.FloatStorage([3.0, 4.0]))
    assert on_npu.is_npu and on_npu.cpu().tolist() == [3.0, 4.0]
    with pytest.raises(RuntimeError, match="from_buffer: Not available for NPU storage"):
        torch.npu.ByteStorage.from_buffer(b"ab")


def test_identity_properties():
    x = torch.ones(2).npu(1)
    assert x.is_npu and not x.is_cpu and not x.is_cuda and x.device == torch.device("npu:1")
    assert torch.ones(1).is_cpu
    assert x.data.is_npu and x.data.device == x.device
    assert "device='npu:1'" in repr(x)
    with pytest.raises(TypeError, match="can't convert npu:1 device type tensor to numpy"):
        x.numpy()
    assert x.cpu().numpy().tolist() == [1.0, 1.0]
    pinned = torch.ones(3).pin_memory()
    assert pinned.tolist() == [1.0, 1.0, 1.0] and not pinned.is_npu


def test_python_callables_over_elements_run_on_host_tensors_only():
    npu = torch.zeros(3).npu()
    for call, name in (
        (lambda: npu.apply_(lambda a: a + 1), "apply_"),
        (lambda: npu.map_(npu, lambda a, b: a + b), "map_"),
        (lambda: npu.map2_(npu, npu, lambda a, b, c: a), "map2_"),
    ):
        with pytest.raises(TypeError, match=f"^{name} is only implemented on CPU tensors"):
            call()
    host = torch.zeros(3)
    with pytest.raises(TypeError, match="map_: expected torch.FloatTensor for 'other'"):
        host.map_(npu, lambda a, b: a + b)
    assert npu.cpu().tolist() == [0.0, 0.0, 0.0]
    host.map_(torch.ones(3), lambda a, b: a + b + 1).apply_(lambda a: a * 2)
    assert host.tolist() == [4.0, 4.0, 4.0]


def test_take_along_dim_wants_its_tensors_on_one_device():
    x = torch.randn(2, 3, 4)
    indices = torch.argsort(x, dim=1)
    for a, b in ((x.npu(), indices), (x, indices.npu())):
        with pytest.raises(RuntimeError, match=r"^Expected tensor to have .* torch.take_along_dim"):
            torch.take_along_dim(a, b, dim=1)
    with pytest.raises(RuntimeError, match=r"got tensor with cpu Device"):
        x.npu().take_along_dim(indices, 1)
    out = torch.take_along_dim(x.npu(), indices.npu(), dim=1)
    assert out.is_npu and torch.equal(out.cpu(), torch.take_along_dim(x, indices, dim=1))


@pytest.mark.skipif(
    int(torch.__version__.split(".")[0]) < 2, reason="torch 1.13 has no npu device type"
)
def test_aten_makers_called_with_an_npu_device_make_npu_tensors():
    aten = torch.ops.aten
    made = aten.empty.memory_format([2, 3], device=torch.device("npu", 1))
    assert made.device == torch.device("npu:1") and made.shape == (2, 3)
    assert aten.zeros.default([2], device="npu").cpu().tolist() == [0.0, 0.0]
    sparse = aten._sparse_coo_tensor_with_dims(2, 0, [4, 4], device="npu", layout=torch.sparse_coo)
    assert sparse.is_npu and sparse.layout == torch.sparse_coo and sparse._nnz() == 0
    assert sparse._indices().is_npu and sparse._indices().shape == (2, 0)
    quantized = torch._empty_affine_quantized(
        [2, 3], scale=0.5, zero_point=1, dtype=torch.quint8, device="npu"
    )
    assert quantized.is_npu and quantized.is_quantized and quantized.q_scale() == 0.5
    assert quantized.ravel()._base is quantized


def test_operations_keep_their_inputs_npu():
    a = torch.randn(4, 4).npu(2)
    b = torch.randn(4, 4).npu(2)
    for out in (
        a + b,
        a @ b,
        a.t(),
        a[1:],
        torch.cat([a, b]),
        a.sum(),
        torch.relu(a),
        a.half() @ b.half(),
        a.detach(),
        a.clone(),
        a.view(16),
        torch.stack([a, b]),
    ):
        assert out.device == torch.device("npu:2"), out
    host = torch.zeros(4, 4)
    host.copy_(a)  # a copy between devices writes the host tensor, which stays on the host
    assert not host.is_npu and torch.equal(host, a.cpu())
    scale = torch.tensor(2.0)
    assert (a * scale).device == torch.device("npu:2")  # host scalars mix in, as on the NPU


def test_new_outputs_are_contiguous_as_torch_npu_allocates_them():
    """torch's CPU kernels give ``x.t().eq(y)`` the transposed strides of ``x.t()``; torch_npu's
    operators allocate their outputs contiguous, and the model zoo's accuracy helper views them
    flat. Views, in-place and ``out=`` results and copies between devices keep their strides on
    both."""
    scores = torch.randn(4, 10)
    target = torch.tensor([1, 2, 3, 4])

    def correct_top(logits, labels, k):  # the model zoo's accuracy(), as its scripts write it
        pred = logits.topk(k, 1, True, True)[1].t()
        correct = pred.eq(labels.view(1, -1).expand_as(pred))
        return correct[:k].view(-1).float().sum(0)

    with pytest.raises(RuntimeError, match="view size is not compatible"):
        correct_top(scores, target, 3)  # host tensors keep torch's strides
    on_npu = correct_top(scores.npu(), target.npu(), 3)
    want = (scores.topk(3, 1, True, True)[1] == target.view(-1, 1)).sum().float()
    assert torch.equal(on_npu.cpu(), want)

    x = torch.randn(3, 5).npu()
    t = x.t()
    assert not t.is_contiguous() and t.device == x.device  # a view keeps its strides
    host = x.cpu().t()
    for made in (
        lambda v: v * 2,
        lambda v: v.eq(0.5),
        lambda v: v.half(),
        lambda v: v.clone(),
        torch.relu,
        lambda v: v + v,
        torch.exp,
    ):
        out = made(t)
        assert out.is_contiguous() and out.device == x.device, out.stride()
        assert torch.equal(out.cpu(), made(host))
    # Copies between devices are torch's _to_copy, as torch_npu's: strides kept.
    assert t.cpu().stride() == t.stride() and t.to("npu:1").stride() == t.stride()
    halves = t.half()
    assert (halves @ halves.t()).is_contiguous()
    written = torch.empty(3, 5).npu().t()
    torch.mul(t, 2, out=written)
    assert not written.is_contiguous() and torch.equal(written.cpu(), x.cpu().t() * 2)
    t.mul_(1)
    assert not t.is_contiguous()
    # (channels_last, which torch_npu refuses for NPU tensors: test_emulator_tensors.py)


def test_repeat_interleave_of_an_npu_tensor_stays_on_it():
    """torch 1.13 builds the int count's index with a host maker inside; on the NPU it works."""
    x = torch.arange(6.0).view(2, 3)
    on_npu = x.npu(1)
    for args, kwargs in [
        ((2,), {"dim": 0}),
        ((3,), {"dim": 1}),
        ((2,), {}),
        ((torch.tensor([1, 2]).npu(1),), {"dim": 0}),
    ]:
        want = x.repeat_interleave(*[a.cpu() if torch.is_tensor(a) else a for a in args], **kwargs)
        for got in (
            on_npu.repeat_interleave(*args, **kwargs),
            torch.repeat_interleave(on_npu, *args, **kwargs),
        ):
            assert got.device == torch.device("npu:1") and torch.equal(got.cpu(), want)
    counts = torch.tensor([2, 0, 1]).npu(1)
    assert torch.equal(torch.repeat_interleave(counts).cpu(), torch.tensor([0, 0, 2]))


def test_unflatten_dense_tensors_puts_every_result_on_the_flat_tensors_npu():
    """torch's C++ makes a new empty tensor, with the flat tensor's options, for an empty one:
    on an NPU that is an NPU tensor too, beside the views of the flat tensor."""
    tensors = [torch.empty(0).npu(1), torch.ones(2, 3).npu(1), torch.empty(0).npu(1)]
    flat = torch._utils._flatten_dense_tensors(tensors)
    for out in (
        torch._utils._unflatten_dense_tensors(flat, tensors),
        torch._C._nn.unflatten_dense_tensors(flat, tensors),
    ):
        assert [o.device for o in out] == [torch.device("npu:1")] * 3
        assert [o.shape for o in out] == [t.shape for t in tensors]
        assert torch.equal(out[1].cpu(), torch.ones(2, 3))
        assert out[0].add(1).device == torch.device("npu:1")
    host = torch._utils._unflatten_dense_tensors(torch.ones(6), [torch.empty(0), torch.ones(6)])
    assert [o.device.type for o in host] == ["cpu", "cpu"]


def test_tensors_on_two_npus_do_not_mix():
    a = torch.ones(2).npu(0)
    b = torch.ones(2).npu(1)
    with pytest.raises(RuntimeError, match="npu:0 and npu:1"):
        a + b
    b.copy_(a)  # copies between devices are allowed
    assert b.device == torch.device("npu:1")


def test_gradients_live_where_their_tensors_live():
    w = nn.Parameter(torch.randn(3, 2).npu())
    x = torch.randn(5, 3, requires_grad=True)
    out = (x.npu() @ w).sum()
    out.backward()
    assert w.grad.device == torch.device("npu:0") and w.grad.type() == "torch.npu.FloatTensor"
    assert x.grad.device == torch.device("cpu")  # back through the copy to the host
    xh = torch.randn(2, requires_grad=True)
    (xh.to("npu", torch.float16) * 2).float().sum().backward()
    assert xh.grad.dtype == torch.float32 and not xh.grad.is_npu
    assert torch.equal(xh.grad, torch.full((2,), 2.0))


def test_parameters_and_deepcopies_keep_their_npu():
    p = nn.Parameter(torch.zeros(2, device="npu:3"))
    assert p.device == torch.device("npu:3") and isinstance(p, nn.Parameter)
    assert copy.deepcopy(p).device == torch.device("npu:3")
    m = nn.Linear(2, 2).npu(3)
    assert copy.deepcopy(m).weight.device == torch.device("npu:3")


# --- modules -----------------------------------------------------------------------------------


def test_module_npu_and_to_move_parameters_buffers_and_grads():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Flatten(), nn.Linear(4, 2))
    m(torch.randn(2, 3, 3, 3)).sum().backward()
    assert m.npu() is m
    tensors = list(m.parameters()) + list(m.buffers()) + [p.grad for p in m.parameters()]
    assert all(t.device == torch.device("npu:0") for t in tensors)
    m.to("npu:2", torch.float16)
    assert all(
        p.device == torch.device("npu:2") and p.dtype == torch.float16 for p in m.parameters()
    )
    assert m[1].num_batches_tracked.dtype == torch.int64 and m[1].num_batches_tracked.is_npu
    out = m(torch.randn(2, 3, 3, 3).npu(2).half())
    assert out.type() == "torch.npu.HalfTensor"
    m.to(torch.device("cpu"))
    assert not any(t.is_npu for t in m.parameters())
    m.npu(torch.device("npu:1")).float()
    assert all(p.type() == "torch.npu.FloatTensor" for p in m.parameters())
    m.cpu()
    assert all(p.device == torch.device("cpu") for p in m.parameters())


def test_training_on_the_npu_equals_training_on_the_host():
    torch.manual_seed(0)
    host = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    npu = copy.deepcopy(host).npu(1)
    data, target = torch.randn(16, 4), torch.randn(16, 1)
    for model, d, t in ((host, data, target), (npu, data.npu(1), target.to("npu:1"))):
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(5):
            opt.zero_grad()
            nn.functional.mse_loss(model(d), t).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    for a, b in zip(host.parameters(), npu.parameters()):
        assert b.device == torch.device("npu:1") and torch.equal(a, b.cpu())
    for state in torch.optim.SGD(npu.parameters(), lr=0.1).state.values():
        assert state["momentum_buffer"].is_npu


# --- checkpoints -------------------------------------------------------------------------------


def saved(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def loaded(data, **kwargs):
    return torch.load(io.BytesIO(data), **kwargs)


def test_checkpoints_load_where_map_location_says():
    data = saved(
        {"npu": torch.arange(3.0).npu(2), "host": torch.ones(2), "nested": [torch.zeros(1).npu(1)]}
    )
    plain = loaded(data)
    assert plain["npu"].device == torch.device("npu:2") and plain["host"].device.type == "cpu"
    assert plain["nested"][0].device == torch.device("npu:1")
    for location, want in (
        ("cpu", "cpu"),
        ("npu", "npu:0"),
        ("npu:5", "npu:5"),
        (torch.device("npu:4"), "npu:4"),
        (torch.device("cpu"), "cpu"),
    ):
        got = loaded(data, map_location=location)
        assert str(got["npu"].device) == want and str(got["host"].device) == want
        assert got["npu"].tolist() == [0.0, 1.0, 2.0]
    mapped = loaded(data, map_location={"npu:2": "npu:0", "cpu": "npu:3"})
    assert mapped["npu"].device == torch.device("npu:0")
    assert mapped["host"].device == torch.device("npu:3")
    assert mapped["nested"][0].device == torch.device("npu:1")
    seen = []
    custom = loaded(data, map_location=lambda storage, loc: seen.append(loc) or storage)
    assert sorted(seen) == ["cpu", "npu:1", "npu:2"] and custom["npu"].tolist() == [0, 1, 2]


def test_a_module_checkpoint_resumes_on_another_npu():
    m = nn.Linear(3, 2).npu(1)
    state = loaded(saved(m.state_dict()), map_location="npu:0")
    fresh = nn.Linear(3, 2).npu(0)
    fresh.load_state_dict(state)
    assert fresh.weight.device == torch.device("npu:0")
    assert torch.equal(fresh.weight.cpu(), m.weight.cpu())


def save_elsewhere(path, location, value):
    """torch.save of {"w": value} by a child without the emulator, recording every storage at
    ``location`` (what a real NPU or a GPU writes)."""
    code = f"""
        import torch
        torch.serialization.register_package(1, lambda s: {location!r}, lambda s, loc: None)
        torch.save({{"w": {value}}}, {str(path)!r})
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def test_a_checkpoint_saved_on_a_real_npu_loads(tmp_path):
    path = tmp_path / "real.pt"
    save_elsewhere(path, "npu:1", "torch.arange(4.0)")
    w = torch.load(path)["w"]
    assert w.device == torch.device("npu:1") and w.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert torch.load(path, map_location="cpu")["w"].device.type == "cpu"


def test_checkpoints_from_cuda_need_a_map_location(tmp_path):
    path = tmp_path / "gpu.pt"
    save_elsewhere(path, "cuda:0", "torch.ones(2)")
    with pytest.raises(RuntimeError, match="saved on 'cuda:0'.*map_location"):
        torch.load(path)
    assert torch.load(path, map_location="npu")["w"].device == torch.device("npu:0")


# --- DDP's device ids --------------------------------------------------------------------------


def test_ddp_takes_the_npu_the_module_is_on(tmp_path):
    import torch.distributed as dist

    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    try:
        torch.npu.set_device(1)
        model = nn.Linear(3, 2).npu()
        ddp = nn.parallel.DistributedDataParallel(model, device_ids=[1], output_device=1)
        out = ddp(torch.randn(4, 3).npu())
        assert out.device == torch.device("npu:1")
        out.sum().backward()
        assert model.weight.grad.is_npu
        # A comm hook sees the bucket on the NPU, as on torch_npu (DDP's C++ made it on the
        # host): the fp16 compression hook casts there and its future's result is there too.
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        seen = []

        def hook(state, bucket):
            seen.append((bucket.buffer().device, bucket.gradients()[0].device))
            return default_hooks.fp16_compress_hook(state, bucket).then(
                lambda fut: seen.append(fut.value().device) or fut.value()
            )

        hooked = nn.parallel.DistributedDataParallel(nn.Linear(3, 2).npu(), device_ids=[1])
        hooked.register_comm_hook(None, hook)
        hooked(torch.randn(4, 3).npu()).sum().backward()
        npu1 = torch.device("npu:1")
        assert seen == [(npu1, npu1), npu1] and hooked.module.weight.grad.is_npu
        nn.parallel.DistributedDataParallel(model, device_ids=["npu:1"])
        with pytest.raises(
            ValueError, match="device_ids names npu:0 but the module's parameters are on npu:1"
        ):
            nn.parallel.DistributedDataParallel(model, device_ids=[0])
    finally:
        dist.destroy_process_group()


def test_ddp_with_device_ids_moves_host_inputs_to_its_npu(tmp_path):
    """torch's DDP with device_ids moves each forward's inputs to that device (accelerate's
    DDP comm-hook test hands its model a host batch); without ids it leaves them as they are."""
    import collections

    import torch.distributed as dist

    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    Pair = collections.namedtuple("Pair", "x scale")

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(3))

        def forward(self, pair, extra=None, rows=()):
            seen.append([t.device for t in (pair.x, pair.scale, extra["bias"], *rows)])
            return self.w * pair.x * pair.scale + extra["bias"] + sum(rows)

    seen = []
    try:
        torch.npu.set_device(1)
        ddp = nn.parallel.DistributedDataParallel(Scaled().npu(), device_ids=[1])
        x = torch.arange(3.0)
        out = ddp(Pair(x, torch.tensor(2.0)), extra={"bias": torch.ones(3)}, rows=[x, x])
        npu1 = torch.device("npu:1")
        assert seen == [[npu1] * 5] and out.device == npu1
        assert out.tolist() == [1.0, 5.0, 9.0] and x.device.type == "cpu"
        out.sum().backward()
        assert ddp.module.w.grad.device == npu1 and ddp.module.w.grad.tolist() == [0.0, 2.0, 4.0]
        plain = nn.parallel.DistributedDataParallel(Scaled().npu())
        with pytest.raises(RuntimeError, match="npu:1 and cpu"):
            plain(Pair(x, torch.tensor(2.0)), extra={"bias": torch.ones(3)})
    finally:
        dist.destroy_process_group()


# --- torch.npu ---------------------------------------------------------------------------------


def test_streams_and_events_keep_order_and_time():
    s = torch.npu.Stream()
    with torch.npu.stream(s):
        assert torch.npu.current_stream() is s
    assert torch.npu.current_stream() is torch.npu.default_stream()
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    time.sleep(0.02)
    end.record(s)
    end.synchronize()
    assert 15.0 <= start.elapsed_time(end) < 2000.0
    s.wait_stream(torch.npu.current_stream())
    x = torch.ones(2).npu()
    x.record_stream(s)
    assert s.query() and end.query()
    with pytest.raises(RuntimeError, match="enable_timing"):
        torch.npu.Event().elapsed_time(end)


def test_memory_queries_report_the_process():
    big = torch.ones(32 * 2**20 // 4).npu()  # 32 MiB
    assert torch.npu.memory_allocated() >= 32 * 2**20
    assert torch.npu.max_memory_allocated() >= torch.npu.memory_allocated() * 0.5
    free, total = torch.npu.mem_get_info()
    assert 0 < free <= total
    torch.npu.reset_peak_memory_stats()
    torch.npu.empty_cache()
    assert "allocated_bytes.all.current" in torch.npu.memory_stats(0)
    assert torch.npu.get_device_properties(0).total_memory == total
    del big


def test_torch_npu_functions():
    assert torch.npu.is_available() and torch.npu.is_initialized()
    torch.npu.synchronize()
    torch.npu.synchronize("npu:7")
    assert torch.npu.get_device_name(0) == "Ascend910A"  # the default chip
    torch.npu.manual_seed(5)
    a = torch.randn(3, device="npu")
    torch.npu.manual_seed_all(5)
    assert torch.equal(torch.randn(3, device="npu"), a)
    state = torch.npu.get_rng_state()
    b = torch.rand(2, device="npu")
    torch.npu.set_rng_state(state)
    assert torch.equal(torch.rand(2, device="npu"), b)
    torch.npu.set_compile_mode(jit_compile=False)
    torch.npu.set_option({"ACL_OP_COMPILER_CACHE_MODE": "enable"})
    torch.npu.config.allow_internal_format = False
    assert torch.npu.is_bf16_supported() is False
    with torch.npu.device_of(torch.ones(1).npu(6)):
        assert torch.npu.current_device() == 6
    status = torch.npu_alloc_float_status()
    assert status.device == torch.device("npu:0")


def test_npu_random_states_fork_and_restore_through_the_default_generators():
    # Megatron-style model-parallel RNG trackers (Ascend's GLM, CPM) save the NPU state, seed a
    # generator of torch.npu.default_generators, draw, and put the saved state back.
    import torch.npu.random as npu_random

    assert npu_random is torch.npu.random and npu_random.get_rng_state is torch.npu.get_rng_state
    generators = torch.npu.default_generators
    assert len(generators) == torch.npu.device_count()
    assert all(isinstance(g, torch.Generator) for g in generators)
    torch.npu.manual_seed(11)
    saved = npu_random.get_rng_state()
    generators[0].manual_seed(1234)
    forked = torch.randn(4, device="npu")
    generators[0].set_state(saved)
    after = torch.randn(4, device="npu")
    torch.npu.manual_seed(11)
    assert torch.equal(torch.randn(4, device="npu"), after)
    generators[3].manual_seed(1234)
    assert torch.equal(torch.randn(4, device="npu:3").cpu(), forked.cpu())
    assert torch.equal(generators[2].get_state(), torch.npu.get_rng_state(2))
    states = npu_random.get_rng_state_all()
    assert len(states) == torch.npu.device_count()
    npu_random.set_rng_state_all(states)


@pytest.mark.skipif(
    not TORCH_BEFORE_2_1,
    reason="torch_npu for torch 2.1 and later has no "
    "graph mode: test_graph_mode_is_gone_as_from_torch_npu_2_1 checks it",
)
def test_graph_mode_of_torch_npu_1_x():
    # Ascend's ResNet50, MobileNetV2 and BERT-Squad (--graph_mode) wrap each step in it.
    assert torch.npu.is_graph_mode() is False
    with pytest.raises(RuntimeError, match="Npu run mode must be graph mode when launch graph"):
        torch.npu.launch_graph()
    with pytest.raises(TypeError, match="verbose must be a bool"):
        torch.npu.enable_graph_mode(1)
    layer = nn.Linear(4, 2).npu()
    x = torch.randn(3, 4).npu()
    eager = layer(x)
    torch.npu.enable_graph_mode()
    try:
        assert torch.npu.is_graph_mode() is True
        in_graph = layer(x)
        torch.npu.launch_graph()
        assert torch.npu.is_graph_mode() is True  # launching keeps the mode
    finally:
        torch.npu.disable_graph_mode()
    assert torch.npu.is_graph_mode() is False
    assert torch.equal(in_graph.cpu(), eager.cpu()) and in_graph.is_npu


@pytest.mark.skipif(TORCH_BEFORE_2_1, reason="torch 1.x: torch_npu has graph mode")
def test_graph_mode_is_gone_as_from_torch_npu_2_1():
    for name in ("enable_graph_mode", "disable_graph_mode", "is_graph_mode", "launch_graph"):
        assert not hasattr(torch.npu, name), name
    # There torch.npu.graph is torch_npu's NPUGraph capture, not the graph mode's module.
    assert not hasattr(torch.npu, "graph")


def test_tensors_made_from_a_private_format_keep_it_as_on_the_npu():
    # torch_npu allocates empty_like (so zeros_like, ...) in the input's format, clones and casts
    # dtypes into it, and detach shares the storage that carries it. Ascend's apex relies on it:
    # its NpuFused optimizers size their state (zeros_like of each parameter) like the gradients
    # it casts to the parameter's format. The host has ND only; other operations give ND.
    w = torch.randn(1, 32).npu()
    nz = torch_npu.npu_format_cast(w, 29)
    kept = {
        "zeros_like": torch.zeros_like(nz),
        "empty_like": torch.empty_like(nz),
        "ones_like": torch.ones_like(nz),
        "full_like": torch.full_like(nz, 2.0),
        "randn_like": torch.randn_like(nz),
        "clone": nz.clone(),
        "half": nz.half(),
        "float of half": nz.half().float(),
        "to fp16": nz.to(torch.float16),
        "detach": nz.detach(),
        "data": nz.data,
    }
    for name, t in kept.items():
        assert (torch_npu.get_npu_format(t), torch_npu.get_storage_size(t), t.is_npu) == (
            29,
            512,
            True,
        ), name
    assert torch.equal(nz.half().float().cpu(), w.half().float().cpu())
    for name, t in {
        "cpu": nz.cpu(),
        "to cpu": nz.to("cpu", torch.float16),
        "mul": nz * 2,
        "plain": torch.zeros_like(w),
    }.items():
        assert (torch_npu.get_npu_format(t), torch_npu.get_storage_size(t)) == (2, 32), name
    # A view shares the NZ tensor's padded storage, as on the NPU.
    assert torch_npu.get_storage_size(nz.view(32)) == 512
    layer = nn.Linear(32, 1).npu()
    layer.weight.data = torch_npu.npu_format_cast(layer.weight.data, 29)
    layer.half()  # amp's O2 cast
    assert torch_npu.get_npu_format(layer.weight) == 29 and layer.weight.dtype == torch.float16
    assert torch_npu.get_storage_size(layer.weight) == 512


# --- NPU kernels that differ from CPU torch's ---------------------------------------------------


def test_binary_cross_entropy_on_the_npu_does_not_check_its_range():
    x = torch.tensor([0.2, 0.7, 0.5])
    t = torch.tensor([0.0, 1.0, 1.0])
    inside = nn.functional.binary_cross_entropy(x.npu(), t.npu())
    assert torch.equal(inside.cpu(), nn.functional.binary_cross_entropy(x, t))
    wild = torch.tensor([3.0, 0.5]).npu()
    float_status.clear()
    out = nn.functional.binary_cross_entropy(wild, torch.tensor([1.0, 0.0]).npu(), reduction="none")
    # log(1 - 3) is NaN: a 910 in saturation mode stores it as 0 and raises the float status.
    assert (
        out.is_npu
        and out[0].item() == 0.0
        and torch.isclose(out[1].cpu(), torch.tensor(0.6931), atol=1e-4)
    )
    assert float_status.clear()
    half = nn.functional.binary_cross_entropy(wild.half(), torch.ones(2).half().npu())
    # The NPU has no fp16 NaN: the result saturates and the float status records it.
    assert half.dtype == torch.float16 and not torch.isnan(half)
    assert float_status.clear()
    with pytest.raises(RuntimeError, match="between 0 and 1"):  # host tensors keep CPU rules
        nn.functional.binary_cross_entropy(torch.tensor([3.0]), torch.tensor([1.0]))


def test_int32_class_targets_and_indices_on_the_npu():
    logits = torch.randn(4, 5)
    target = torch.tensor([0, 4, 2, 1])
    want = nn.functional.cross_entropy(logits, target)
    got = nn.functional.cross_entropy(logits.npu(), target.to(torch.int32).npu())
    assert got.is_npu and torch.equal(got.cpu(), want)
    half = nn.functional.cross_entropy(logits.half().npu(), target.int().npu())
    assert half.dtype == torch.float16
    # Two NPU kernels, each storing fp16: log_softmax, then nll_loss.
    steps = nn.functional.log_softmax(logits.half().float(), 1).half().float()
    assert torch.equal(half.cpu(), nn.functional.nll_loss(steps, target).half())
    w = logits.clone().npu().requires_grad_()
    nn.functional.nll_loss(w.log_softmax(1), target.int().npu()).backward()
    assert w.grad.is_npu
    idx = torch.tensor([[1], [0], [3], [2]])
    assert torch.equal(
        torch.gather(logits.npu(), 1, idx.int().npu()).cpu(), torch.gather(logits, 1, idx)
    )
    with pytest.raises(RuntimeError, match="Long"):  # host tensors keep CPU rules
        nn.functional.cross_entropy(logits, target.int())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_int32_indices_of_scatter_and_indexing_on_the_npu(dtype):
    """fairseq-style loaders batch IntTensors: ``lprobs.gather(-1, target)`` trains on the NPU,
    its backward a scatter_add with that index; torch 1.13's CPU kernels refuse int32 there."""
    x = torch.randn(4, 5)
    idx = torch.tensor([[1], [2], [0], [4]])
    rows = torch.tensor([3, 0])
    src = torch.randn(4, 1)
    ref = x.to(dtype).float()  # the values the NPU holds
    w = x.to(dtype).npu().requires_grad_()
    picked = w.gather(-1, idx.int().npu())
    picked.float().sum().backward()
    assert torch.equal(
        w.grad.cpu().float(), torch.zeros(4, 5).scatter_add(-1, idx, torch.ones(4, 1))
    )
    on_npu = {
        "scatter": lambda a, i, s: a.scatter(-1, i, s),
        "scatter_value": lambda a, i, s: a.scatter(-1, i, 2.0),
        "scatter_add": lambda a, i, s: a.scatter_add(-1, i, s),
        "scatter_reduce": lambda a, i, s: a.scatter_reduce(-1, i, s, "amax"),
        "index": lambda a, i, s: a[i[:2, 0]],
        "index_put": lambda a, i, s: a.index_put((i[:2, 0],), s[:2]),
    }
    for name, op in on_npu.items():
        got = op(x.to(dtype).npu(), idx.int().npu(), src.to(dtype).npu())
        want = op(ref, idx, src.to(dtype).float()).to(dtype)
        assert got.is_npu and torch.equal(got.cpu(), want), name
    inplace = x.to(dtype).npu()
    inplace[rows.int().npu()] = torch.zeros(2, 5, dtype=dtype).npu()
    assert torch.equal(inplace.cpu()[rows], torch.zeros(2, 5, dtype=dtype))
