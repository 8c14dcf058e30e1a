"""torch_npu.npu_add_rms_norm(_cast) and npu_gemma_rms_norm against RMSNorm written in plain
torch from their documentation (tolerances: overlay_support.npu_op_checks): the sum
``x1 + x2`` in fp32, ``rstd = 1 / sqrt(mean(x^2) + eps)``, ``y = x * rstd * gamma`` (Gemma:
``* (1 + gamma)``); no backward (torch_npu registers none)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    check_no_derivative,
    DTYPES,
    FP32,
    assert_close,
    check_saturation,
    on_npu,
    randn,
    torch_npu,
)


def rms(x, gamma, eps, gemma=False):
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    rstd = torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + eps)
    return x * rstd * ((1 + gamma) if gemma else gamma), rstd


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("gamma_shape", [(8,), (3, 8)])
def test_add_rms_norm(dtype, gamma_shape):
    x1, x2 = randn(2, 3, 8, seed=1).to(dtype), randn(2, 3, 8, seed=2).to(dtype)
    gamma = randn(*gamma_shape, seed=3).to(dtype)
    y, rstd, x = torch_npu.npu_add_rms_norm(on_npu(x1), on_npu(x2), on_npu(gamma), 1e-5)
    total = x1.float() + x2.float()
    want_y, want_rstd = rms(total, gamma.float(), 1e-5)
    assert_close(y, want_y, dtype, "y")
    assert_close(x, total, dtype, "x")
    assert rstd.dtype == torch.float32
    assert rstd.shape == (2, 3, 1) if len(gamma_shape) == 1 else rstd.shape == (2, 1, 1)
    torch.testing.assert_close(rstd.cpu(), want_rstd, **FP32)


@pytest.mark.parametrize("dtype", [torch.float16])
def test_add_rms_norm_cast(dtype):
    x1, x2, gamma = (randn(4, 16, seed=s).to(dtype) for s in (4, 5, 6))
    y32, y, rstd, x = torch_npu.npu_add_rms_norm_cast(on_npu(x1), on_npu(x2), on_npu(gamma))
    want, want_rstd = rms(x1.float() + x2.float(), gamma.float(), 1e-6)
    assert y32.dtype == torch.float32 and y.dtype == dtype and x.dtype == dtype
    torch.testing.assert_close(y32.cpu(), want, **FP32)
    assert torch.equal(y.cpu(), y32.cpu().to(dtype)), "y is the fp32 y rounded once"
    torch.testing.assert_close(rstd.cpu(), want_rstd, **FP32)
    with pytest.raises(RuntimeError, match="float16 or bfloat16"):
        torch_npu.npu_add_rms_norm_cast(
            on_npu(x1.float()), on_npu(x2.float()), on_npu(gamma.float())
        )


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemma_rms_norm(dtype):
    x, gamma = randn(3, 5, 16, seed=7, scale=2).to(dtype), randn(16, seed=8).to(dtype)
    y, rstd = torch_npu.npu_gemma_rms_norm(input=on_npu(x), gamma=on_npu(gamma), epsilon=1e-6)
    want, want_rstd = rms(x.float(), gamma.float(), 1e-6, gemma=True)
    assert_close(y, want, dtype, "y")
    assert rstd.dtype == torch.float32 and rstd.shape == (3, 5, 1)
    torch.testing.assert_close(rstd.cpu(), want_rstd, **FP32)


def test_no_backward_and_bad_shapes():
    x2, gamma = on_npu(randn(2, 8, seed=10)), on_npu(randn(8))
    check_no_derivative(
        "npu_add_rms_norm",
        on_npu(randn(2, 8, seed=9), grad=True),
        lambda x: torch_npu.npu_add_rms_norm(x, x2, gamma)[0],
    )
    with pytest.raises(RuntimeError, match="gamma of shape"):
        torch_npu.npu_gemma_rms_norm(on_npu(randn(2, 8)), on_npu(randn(4)))
    with pytest.raises(RuntimeError, match="same shape"):
        torch_npu.npu_add_rms_norm(on_npu(randn(2, 8)), on_npu(randn(1, 8)), on_npu(randn(8)))


def test_fp16_overflow_saturates():
    x1 = on_npu(torch.full((1, 4), 60000.0), torch.float16)
    check_saturation(
        lambda a, b, g: torch_npu.npu_add_rms_norm(a, b, g)[2],
        [x1, x1.clone(), on_npu(torch.ones(4), torch.float16)],
    )
