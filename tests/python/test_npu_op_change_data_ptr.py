"""torch_npu.npu_change_data_ptr and torch_npu.utils.npu_combine_tensors on the emulated NPU:
torch_npu's own checks of them (its test_combine_tensors: values kept, tensors laid end to end,
storage sizes kept), the identity and autograd a re-pointed parameter keeps, the refusals with
torch_npu's messages, and a fused optimizer that updates combined parameters, gradients and
moments as one tensor (the pattern of Ascend's Fairseq Adam) against the same update done
tensor by tensor."""

import copy
import io
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from overlay_support import overlay_env
from overlay_support.npu_op_checks import torch_npu
from torch_npu._device import soc
from torch_npu.utils import get_part_combined_tensor, is_combined_tensor_valid, npu_combine_tensors

DTYPES = (torch.float16, torch.float32, torch.bfloat16)
SHAPES = ((2, 2, 2, 2), (4, 4), (3, 3, 3))


def _tensors(dtype, fill=None):
    g = torch.Generator().manual_seed(0)
    return [
        (torch.randn(s, generator=g) if fill is None else torch.full(s, fill)).to(dtype).npu()
        for s in SHAPES
    ]


@pytest.mark.parametrize("dtype", DTYPES)
def test_change_data_ptr_moves_tensors_into_a_buffer_and_new_tensors_read_them(dtype):
    xs = _tensors(dtype)
    kept = [x.clone() for x in xs]
    total = sum(torch_npu.get_storage_size(x) for x in xs)
    combined = torch.zeros(total, dtype=dtype).npu()
    index = 0
    for x in xs:
        values = x.clone()
        assert torch_npu.npu_change_data_ptr(x, combined, index) == 0
        x.copy_(values)
        index += torch_npu.get_storage_size(x)
    for x, k in zip(xs, kept):
        assert torch.equal(x.cpu(), k.cpu())
    assert torch.equal(combined.cpu(), torch.cat([k.cpu().reshape(-1) for k in kept]))
    index = 0
    for x, k in zip(xs, kept):  # fresh tensors pointed at the same places read the same values
        fresh = torch.zeros(x.shape, dtype=dtype).npu()
        torch_npu.npu_change_data_ptr(fresh, combined, index)
        assert torch.equal(fresh.cpu(), k.cpu()) and fresh.device.type == "npu"
        index += torch_npu.get_storage_size(x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_combined_tensors_lie_end_to_end_and_keep_their_storage_sizes(dtype):
    xs = _tensors(dtype)
    kept = [x.clone() for x in xs]
    combined = npu_combine_tensors(xs)
    sizes = [torch_npu.get_storage_size(x) for x in xs]
    assert sizes == [16, 16, 27]
    assert combined.is_contiguous() and combined.dim() == 1 and combined.is_npu
    assert torch_npu.get_storage_size(combined) == sum(sizes)
    assert combined.data_ptr() == xs[0].data_ptr()
    for a, b, size in zip(xs, xs[1:], sizes):
        assert a.data_ptr() + size * a.element_size() == b.data_ptr()
    for x, k in zip(xs, kept):
        assert torch.equal(x.cpu(), k.cpu()) and x.shape == k.shape


def _arithmetic_on_the_buffer(dtype):
    xs = _tensors(dtype)
    kept = [x.cpu() for x in xs]
    combined = npu_combine_tensors(xs)
    combined.mul_(2).add_(1)
    for x, k in zip(xs, kept):
        assert torch.equal(x.cpu(), k * 2 + 1)
    xs[1].zero_()  # and a write through one tensor is a write to the buffer
    assert not combined.cpu()[16:32].any() and combined.cpu()[:16].any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_arithmetic_on_the_buffer_is_arithmetic_on_every_tensor(dtype):
    if dtype != torch.bfloat16 or soc.has_bf16():
        _arithmetic_on_the_buffer(dtype)
        return
    with pytest.raises(RuntimeError, match="bfloat16 is not supported on Ascend910"):
        _arithmetic_on_the_buffer(dtype)  # a 910 computes no bf16; a 910B does:
    code = textwrap.dedent("""
        import torch, test_npu_op_change_data_ptr as t
        t._arithmetic_on_the_buffer(torch.bfloat16)
    """)
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(overlay_env(), APEXNPU_SOC_VERSION="Ascend910B1")
    env["PYTHONPATH"] = os.pathsep.join([here, env["PYTHONPATH"]])
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr


def test_without_require_copy_value_the_tensors_read_zero():
    xs = _tensors(torch.float32, fill=3.0)
    combined = npu_combine_tensors(xs, require_copy_value=False)
    assert not combined.cpu().any() and all(not x.cpu().any() for x in xs)


def test_part_of_a_combined_tensor_and_validity():
    xs = _tensors(torch.float16)
    combined = npu_combine_tensors(xs)
    part = get_part_combined_tensor(combined, 16, 16)
    assert torch.equal(part.cpu(), xs[1].cpu().reshape(-1))
    part.fill_(5)
    assert torch.equal(xs[1].cpu(), torch.full((4, 4), 5, dtype=torch.float16))
    assert get_part_combined_tensor(combined, 0, 0) is None
    assert get_part_combined_tensor(None, 0, 4) is None
    with pytest.raises(
        RuntimeError,
        match=r"\(index \+ size\) \(60\) > "
        r"torch_npu.get_storage_size\(combined_tensor\) \(59\)",
    ):
        get_part_combined_tensor(combined, 44, 16)
    assert is_combined_tensor_valid(combined, xs) and is_combined_tensor_valid(combined, xs[1:])
    assert is_combined_tensor_valid(combined, []) and not is_combined_tensor_valid(None, xs)
    outside = torch.zeros(4, dtype=torch.float16).npu()
    assert not is_combined_tensor_valid(combined, xs + [outside])
    assert not is_combined_tensor_valid(combined, [xs[1].t()])  # not contiguous


def test_combine_refuses_what_torch_npu_refuses():
    assert npu_combine_tensors([]) is None
    assert npu_combine_tensors([torch.zeros(0).npu()]) is None
    a = torch.zeros(4).npu()
    with pytest.raises(RuntimeError, match="must not have `None`"):
        npu_combine_tensors([a, None])
    with pytest.raises(RuntimeError, match="must have the same dtype"):
        npu_combine_tensors([a, torch.zeros(4, dtype=torch.float16).npu()])
    with pytest.raises(RuntimeError, match="must be on NPU, got cpu"):
        npu_combine_tensors([a, torch.zeros(4)])
    with pytest.raises(RuntimeError, match="must be contiguous"):
        npu_combine_tensors([a, torch.zeros(3, 2).npu().t()])


def test_change_data_ptr_refuses_what_the_npu_cannot_do():
    src = torch.zeros(10).npu()
    with pytest.raises(RuntimeError, match="equal to or greater than zero, got -1"):
        torch_npu.npu_change_data_ptr(torch.zeros(2).npu(), src, -1)
    with pytest.raises(
        RuntimeError, match="same dtype, got src torch.float32 and dst torch.float16"
    ):
        torch_npu.npu_change_data_ptr(torch.zeros(2, dtype=torch.float16).npu(), src, 0)
    with pytest.raises(RuntimeError, match="only float32, float16 and bfloat16"):
        torch_npu.npu_change_data_ptr(
            torch.zeros(2, dtype=torch.int32).npu(), torch.zeros(4, dtype=torch.int32).npu(), 0
        )
    with pytest.raises(RuntimeError, match="dst is on cpu"):
        torch_npu.npu_change_data_ptr(torch.zeros(2), src, 0)
    # 8 elements from 4 would end 2 past src's 10: in elements, never in bytes.
    with pytest.raises(
        RuntimeError,
        match=r"offsets overflow: offset \(index\) 4 \+ dst "
        r"storage size 8 > src storage size 10",
    ):
        torch_npu.npu_change_data_ptr(torch.zeros(8).npu(), src, 4)


def test_a_private_format_keeps_its_storage_size_in_the_buffer():
    nz = torch_npu.npu_format_cast(torch.ones(3, 5).npu(), 29)  # FRACTAL_NZ: 16x16
    plain = torch.full((4,), 2.0).npu()
    combined = npu_combine_tensors([nz, plain])
    assert torch_npu.get_storage_size(nz) == 256
    assert torch_npu.get_storage_size(combined) == 260
    assert plain.data_ptr() == combined.data_ptr() + 256 * 4
    assert torch.equal(plain.cpu(), torch.full((4,), 2.0))


def test_combining_parameters_outside_no_grad_fails_as_on_the_npu():
    layer = torch.nn.Linear(3, 2).npu()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        npu_combine_tensors(list(layer.parameters()))


def test_combined_parameters_and_gradients_stay_the_model_s():
    """A re-pointed parameter is the same parameter: the module and autograd keep using it, and
    gradients accumulate into the combined gradient buffer."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(5, 3).npu()
    weight = layer.weight
    x = torch.randn(4, 5).npu()
    layer(x).sum().backward()
    with torch.no_grad():
        params = npu_combine_tensors(list(layer.parameters()))
        grads = npu_combine_tensors([p.grad for p in layer.parameters()])
    assert layer.weight is weight and weight.is_leaf and weight.requires_grad
    grads.zero_()
    layer(x).sum().backward()
    want = torch.cat([x.sum(0).cpu().repeat(3), torch.full((3,), 4.0)])
    assert torch.allclose(grads.cpu(), want, rtol=1e-6, atol=1e-6)
    with torch.no_grad():
        params.sub_(grads, alpha=0.1)
    assert torch.equal(layer.weight.detach().cpu().reshape(-1), params.cpu()[:15])


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_a_fused_adam_over_combined_tensors_equals_adam_tensor_by_tensor(dtype):
    """Ascend's Fairseq Adam combines parameters, gradients and both moments, then runs Adam's
    arithmetic once over each buffer; element for element it is the arithmetic done tensor by
    tensor, so the two agree bit for bit."""

    def make():
        torch.manual_seed(1)
        return (
            torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
            .npu()
            .to(dtype)
        )

    def adam(p, g, m, v, step, lr=1e-2, b1=0.9, b2=0.999, eps=1e-4, wd=0.01):
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = v.sqrt().add_(eps)
        size = lr * (1 - b2**step) ** 0.5 / (1 - b1**step)
        p.add_(p, alpha=-wd * lr)
        p.addcdiv_(m, denom, value=-size)

    x = torch.randn(16, 6).to(dtype).npu()
    fused, plain = make(), make()
    fused(x).float().pow(2).mean().backward()  # gradients to combine
    with torch.no_grad():
        params = npu_combine_tensors(list(fused.parameters()))
        grads = npu_combine_tensors([p.grad for p in fused.parameters()])
        moments = [
            npu_combine_tensors([torch.zeros_like(p) for p in fused.parameters()]) for _ in range(2)
        ]
    states = [(torch.zeros_like(p), torch.zeros_like(p)) for p in plain.parameters()]
    for step in range(1, 4):
        for model in (fused, plain):
            for p in model.parameters():
                p.grad = None if model is plain else p.grad
            if model is fused:
                grads.zero_()
            model(x).float().pow(2).mean().backward()
        with torch.no_grad():
            adam(params, grads, moments[0], moments[1], step)
            for p, (m, v) in zip(plain.parameters(), states):
                adam(p, p.grad, m, v, step)
    for a, b in zip(fused.parameters(), plain.parameters()):
        assert torch.equal(a.detach().cpu(), b.detach().cpu())


def test_a_view_keeps_its_place_in_its_storage():
    """The NPU moves the storage's pointer: a tensor two elements into its storage reads from
    two elements after ``index``."""
    base = torch.zeros(6).npu()
    view = base[2:5]
    src = torch.arange(10, dtype=torch.float32).npu()
    torch_npu.npu_change_data_ptr(view, src, 3)
    assert torch.equal(view.cpu(), torch.tensor([5.0, 6.0, 7.0]))
    assert torch_npu.get_storage_size(view) == 6
    with pytest.raises(RuntimeError, match="offsets overflow"):
        torch_npu.npu_change_data_ptr(base[2:5], src, 5)  # its storage of 6 would pass 10


def test_a_re_pointed_tensor_reports_its_own_storage_and_src_keeps_its_own():
    """As on the NPU, whose storage descriptor keeps its size and offset when its pointer
    moves: ``dst.storage()`` is ``dst``'s storage size of ``src``'s memory from ``index``."""
    base = torch.arange(6.0).npu()
    view = base[2:5]
    src = torch.zeros(10).npu()
    torch_npu.npu_change_data_ptr(view, src, 3)
    assert view.storage().size() == 6 and view.storage_offset() == 2
    assert src.storage().size() == 10 and torch_npu.get_storage_size(src) == 10
    assert view.data_ptr() == src.data_ptr() + 5 * 4
    view.copy_(torch.tensor([7.0, 8.0, 9.0]))
    assert view.storage().tolist() == [0.0, 0.0, 7.0, 8.0, 9.0, 0.0]  # src[3:9]
    view.storage()[0] = 5.0  # the storage is an alias of src's memory
    assert src.cpu()[3] == 5.0
    if hasattr(view, "untyped_storage"):
        assert view.untyped_storage().nbytes() == 24 and src.untyped_storage().nbytes() == 40
    view.data = torch.ones(3).npu()  # given other data, it reports that data's storage
    assert view.storage().size() == 3 and view.storage_offset() == 0


def test_re_pointed_tensors_copy_and_save_their_own_values():
    xs = _tensors(torch.float32)
    kept = [x.cpu() for x in xs]
    npu_combine_tensors(xs)
    twin = copy.deepcopy(xs[2])
    assert torch.equal(twin.cpu(), kept[2]) and twin.is_npu and twin.storage().size() == 27
    buf = io.BytesIO()
    torch.save(xs, buf)
    buf.seek(0)
    loaded = torch.load(buf)
    for x, k in zip(loaded, kept):
        assert torch.equal(x.cpu(), k) and x.is_npu and x.storage().size() == k.numel()


@pytest.mark.parametrize("dtype", (torch.float16, torch.float32))
def test_a_tensor_larger_than_its_storage_reads_past_index_as_on_the_npu(dtype):
    """torch_npu's test_storage_resize: storages shrunk to 4 elements under tensors of 16, 16
    and 27, then each moved 4 elements apart into a buffer of 12. Each writes past its storage
    (the NPU's allocator slack after ``src``); each storage then holds the first 4 values of its
    tensor, and the buffer still reports 12 elements."""
    torch.manual_seed(0)
    xs = [torch.randn(s, dtype=dtype).npu() for s in SHAPES]
    firsts = [x.view(-1)[:4].cpu() for x in xs]
    for x in xs:
        x.storage().resize_(4)
    combined = torch.zeros(12, dtype=dtype).npu()
    for i, x in enumerate(xs):
        values = x.clone()
        torch_npu.npu_change_data_ptr(x, combined, 4 * i)
        x.copy_(values)
    for x, first in zip(xs, firsts):
        assert x.storage().size() == 4 and torch.equal(
            torch.tensor(x.storage().tolist(), dtype=dtype), first
        )
    assert combined.storage().size() == 12 and torch_npu.get_storage_size(combined) == 12
    assert torch.equal(combined.cpu(), torch.cat(firsts))
