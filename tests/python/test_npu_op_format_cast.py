"""torch_npu.npu_format_cast / npu_format_cast_ as torch_npu 2.14 declares them: the
``customize_dtype=`` keyword, the tensor overload (the target is another tensor's format), the
storage the NPU allocates for a private format (FRACTAL_NZ's 16-row by C0-column fractals, C0
32 bytes of the element or of ``customize_dtype``; NC1HWC0's channels padded to 16), base
formats relabelled in place, and the 910B's aclnn cast (``customize_dtype`` taken, a vector
kept ND). Values never change: they are compared exactly."""

import subprocess
import sys
import textwrap

import pytest
import torch

import overlay_support
from overlay_support.npu_op_checks import on_npu, randn, torch_npu

ND, NCHW, NC1HWC0, NZ = 2, 0, 3, 29


def storage_bytes(t):
    return t.untyped_storage().nbytes() if hasattr(t, "untyped_storage") else t.storage().nbytes()


def nz_elements(shape, c0):
    rows, cols = shape[-2], shape[-1]
    batch = 1
    for d in shape[:-2]:
        batch *= d
    return batch * -(-rows // 16) * 16 * -(-cols // c0) * c0


@pytest.mark.parametrize(
    "shape, dtype, c0",
    [
        ((15, 17), torch.float16, 16),
        ((16, 32), torch.float32, 16),
        ((15, 33), torch.int8, 32),
        ((3, 15, 33), torch.int8, 32),
        ((4, 15, 17), torch.int32, 16),
        ((9, 40), torch.int64, 16),
    ],
)
def test_fractal_nz_allocates_the_npus_storage(shape, dtype, c0):
    x = randn(*shape, seed=1, scale=50).to(dtype)
    src = on_npu(x)
    out = torch_npu.npu_format_cast(src, NZ)
    assert out is not src and out.is_npu and out.shape == src.shape and out.dtype == dtype
    assert torch_npu.get_npu_format(out) == NZ and torch_npu.get_npu_format(src) == ND
    elements = nz_elements(shape, c0)
    assert torch_npu.get_storage_size(out) == elements
    assert storage_bytes(out) == elements * out.element_size()
    assert torch.equal(out.cpu(), x)
    back = torch_npu.npu_format_cast(out, ND)
    assert torch_npu.get_npu_format(back) == ND and torch.equal(back.cpu(), x)
    assert torch_npu.get_storage_size(back) == x.numel()


@pytest.mark.parametrize(
    "shape, elements",
    [
        ((2, 3, 4, 4), 2 * 16 * 4 * 4),
        ((3, 4, 5), 16 * 4 * 5),
        ((20,), 32),
        ((2, 33, 1, 2), 2 * 48 * 2),
    ],
)
def test_nc1hwc0_pads_the_channels(shape, elements):
    x = randn(*shape, seed=2)
    out = torch_npu.npu_format_cast(on_npu(x), NC1HWC0)
    assert torch_npu.get_npu_format(out) == NC1HWC0
    assert torch_npu.get_storage_size(out) == elements
    assert storage_bytes(out) == elements * 4 and torch.equal(out.cpu(), x)


def test_the_same_format_is_the_tensor_itself():
    x = on_npu(randn(4, 8, seed=3))
    assert torch_npu.npu_format_cast(x, ND) is x
    nz = torch_npu.npu_format_cast(x, NZ)
    assert torch_npu.npu_format_cast(nz, NZ) is nz


def test_base_formats_relabel_the_tensor_in_place():
    x = on_npu(randn(2, 3, 4, 5, seed=4))
    ptr = x.data_ptr()
    out = torch_npu.npu_format_cast(x, NCHW)
    assert out is x and x.data_ptr() == ptr and torch_npu.get_npu_format(x) == NCHW
    assert torch_npu.npu_format_cast(x, ND) is x and torch_npu.get_npu_format(x) == ND


def test_the_tensor_overload_takes_the_other_tensors_format():
    x = randn(8, 16, seed=5)
    nz_ref = torch_npu.npu_format_cast(on_npu(torch.zeros(8, 16)), NZ)
    for out in (
        torch_npu.npu_format_cast(on_npu(x), nz_ref),
        torch_npu.npu_format_cast(on_npu(x), dst=nz_ref),
        on_npu(x).npu_format_cast(nz_ref),
    ):
        assert torch_npu.get_npu_format(out) == NZ and torch.equal(out.cpu(), x)
    back = torch_npu.npu_format_cast(out, on_npu(torch.zeros(2)))
    assert torch_npu.get_npu_format(back) == ND and torch.equal(back.cpu(), x)


def test_the_gradient_passes_through():
    a = on_npu(randn(4, 8, seed=6), grad=True)
    b = torch_npu.npu_format_cast(a, NZ)
    assert b.requires_grad
    (b * torch.arange(32.0).view(4, 8).npu()).sum().backward()
    assert torch.equal(a.grad.cpu(), torch.arange(32.0).view(4, 8))


def test_in_place_casts():
    x = randn(5, 7, seed=7)
    t = on_npu(x)
    assert torch_npu.npu_format_cast_(t, NZ) is t
    assert torch_npu.get_npu_format(t) == NZ and torch_npu.get_storage_size(t) == 16 * 16
    assert torch.equal(t.cpu(), x)
    assert torch_npu.npu_format_cast_(t, ND) is t and torch_npu.get_npu_format(t) == ND
    assert torch_npu.get_storage_size(t) == 35
    # With a tensor, torch_npu writes that tensor's values into the input, in its format.
    other = randn(5, 7, seed=8)
    assert torch_npu.npu_format_cast_(t, on_npu(other)) is t and torch.equal(t.cpu(), other)


def test_a_910_takes_no_customize_dtype_and_keeps_vectors_nz():
    x = on_npu(randn(15, 17, seed=9))
    with pytest.raises(
        RuntimeError, match="customize_dtype is not supported by the current soc version"
    ):
        torch_npu.npu_format_cast(x, NZ, customize_dtype=3)
    vector = torch_npu.npu_format_cast(on_npu(torch.arange(12.0)), NZ)  # the aclop cast
    assert torch_npu.get_npu_format(vector) == NZ
    assert torch_npu.get_storage_size(vector) == 16 * 16


def test_a_910b_casts_with_aclnn():
    code = """
        import torch, torch_npu
        def nbytes(t):
            return t.untyped_storage().nbytes() if hasattr(t, "untyped_storage") else \\
                t.storage().nbytes()
        x = torch.randint(0, 100, (15, 17), dtype=torch.int32).npu()
        c0_8 = torch_npu.npu_format_cast(x, 29, customize_dtype=3)          # torch.int32
        c0_16 = torch_npu.npu_format_cast(x, 29)                             # as fp16
        c0_32 = torch_npu.npu_format_cast(x, 29, customize_dtype=256 + 2)   # torch_npu.int8
        print(nbytes(c0_8), nbytes(c0_16), nbytes(c0_32), int(torch_npu.get_npu_format(c0_8)),
              torch.equal(c0_8.cpu(), x.cpu()), torch.equal(c0_32.cpu(), x.cpu()))
        vector = torch.arange(12.0).npu()
        kept = torch_npu.npu_format_cast(vector, 29)
        flat = torch_npu.npu_format_cast(torch.zeros(4, 8).npu().reshape(-1), 29)
        print(kept is vector, int(torch_npu.get_npu_format(kept)),
              int(torch_npu.get_npu_format(flat)))
    """
    env = overlay_support.overlay_env()
    env["APEXNPU_SOC_VERSION"] = "Ascend910B1"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    # 15x17 int32: C0=8: 3x1 fractals of 16x8; C0=16: 2x1 of 16x16; C0=32: 1x1 of 16x32.
    assert proc.stdout.split() == ["1536", "2048", "2048", "29", "True", "True", "True", "2", "29"]


def test_formats_are_torch_npus_enum_and_a_weak_ref_keeps_one():
    fmt = torch_npu.Format
    assert (fmt.NCHW, fmt.NHWC, fmt.ND, fmt.NC1HWC0, fmt.FRACTAL_NZ) == (0, 1, 2, 3, 29)
    nz = torch_npu.npu_format_cast(on_npu(randn(16, 32, seed=2)), NZ)
    got = torch_npu.get_npu_format(nz)
    assert got == fmt.FRACTAL_NZ and got == 29
    # torch_npu 2.x answers the enum (its name prints), torch_npu 1.x the number.
    assert str(got) == ("FRACTAL_NZ" if int(torch.__version__.split(".")[0]) >= 2 else "29")
    from torch_npu._C import _weak_ref_tensor

    base = on_npu(torch.arange(400.0))
    view = torch.as_strided(base, (2, 3, 5), (100, 0, 7), 11)
    for t in (nz, view):
        weak = _weak_ref_tensor(t)
        assert (weak.size(), weak.stride(), weak.storage_offset(), weak.data_ptr()) == (
            t.size(),
            t.stride(),
            t.storage_offset(),
            t.data_ptr(),
        )
        assert torch_npu.get_npu_format(weak) == torch_npu.get_npu_format(t)
        assert torch_npu.get_storage_size(weak) == torch_npu.get_storage_size(t)
        assert weak.is_npu and torch.equal(weak.cpu(), t.cpu())
