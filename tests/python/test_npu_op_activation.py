"""torch_npu.npu_geglu, npu_gelu_mul and npu_clipped_swiglu against their documented formulas
in plain torch (tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch
import torch.nn.functional as F

from overlay_support.npu_op_checks import (
    check_no_derivative,
    DTYPES,
    assert_close,
    check_against_formula,
    check_saturation,
    on_npu,
    randn,
    torch_npu,
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim,approximate,left", [(-1, 1, False), (0, 0, True), (1, 1, True)])
def test_geglu_forward_backward(dtype, dim, approximate, left):
    def formula(x):
        a, b = x.chunk(2, dim=dim)
        act, other = (a, b) if left else (b, a)
        return other * F.gelu(act, approximate="tanh" if approximate else "none")

    check_against_formula(
        lambda x: torch_npu.npu_geglu(
            input=x, dim=dim, approximate=approximate, activate_left=left
        )[0],
        formula,
        [randn(4, 6, 10, seed=1, scale=2)],
        dtype,
    )


def test_geglu_returns_the_gelu():
    x = randn(3, 8, seed=2, scale=2)
    _, gelu = torch_npu.npu_geglu(on_npu(x))
    assert_close(gelu, F.gelu(x[:, 4:], approximate="tanh"), torch.float32, "gelu")
    with pytest.raises(RuntimeError, match="divisible by 2"):
        torch_npu.npu_geglu(on_npu(randn(3, 5)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_mul(dtype, approximate):
    x = randn(5, 12, seed=3, scale=2).to(dtype)
    got = torch_npu.npu_gelu_mul(on_npu(x), approximate=approximate)
    a, b = x.float().chunk(2, dim=-1)
    assert_close(got, F.gelu(a, approximate=approximate) * b, dtype, "gelu_mul")
    check_no_derivative("npu_gelu_mul", on_npu(x.float(), grad=True), torch_npu.npu_gelu_mul)


def clipped_reference(x, dim, alpha, limit, bias, interleaved, rows=None):
    dim %= x.dim()
    pre = 1
    for s in x.shape[:dim]:
        pre *= s
    v = x.reshape(pre, -1)
    a, b = (v[:, 0::2], v[:, 1::2]) if interleaved else v.chunk(2, dim=1)
    a, b = a.clamp(max=limit), b.clamp(-limit, limit)
    y = a * torch.sigmoid(alpha * a) * (b + bias)
    if rows is not None:
        y[rows:] = 0
    shape = list(x.shape)
    shape[dim] //= 2
    return y.reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("interleaved", [True, False])
@pytest.mark.parametrize("dim", [-1, 1])
def test_clipped_swiglu(dtype, interleaved, dim):
    x = randn(4, 6, 8, seed=4, scale=6).to(dtype)
    got = torch_npu.npu_clipped_swiglu(
        on_npu(x), dim=dim, alpha=1.5, limit=5.0, bias=0.5, interleaved=interleaved
    )
    assert_close(
        got, clipped_reference(x.float(), dim, 1.5, 5.0, 0.5, interleaved), dtype, "clipped_swiglu"
    )


def test_clipped_swiglu_group_index_limits_the_rows():
    x = randn(6, 8, seed=5, scale=6)
    got = torch_npu.npu_clipped_swiglu(on_npu(x), group_index=on_npu(torch.tensor([1, 3])))
    assert_close(
        got, clipped_reference(x, -1, 1.702, 7.0, 1.0, True, rows=4), torch.float32, "grouped"
    )


def test_fp16_overflow_saturates():
    x = on_npu(torch.tensor([[300.0, 300.0]]), torch.float16)
    check_saturation(lambda t: torch_npu.npu_geglu(t, activate_left=True)[0], [x])
