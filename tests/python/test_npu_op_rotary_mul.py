"""torch_npu.npu_rotary_mul (half, interleave, rotate matrix) against
``x * cos + rotate(x) * sin`` in plain torch, gradients of x, cos and sin (tolerances:
overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    check_against_formula,
    check_saturation,
    on_npu,
    randn,
    torch_npu,
)


def rotate_half(x):
    d = x.shape[-1] // 2
    return torch.cat((-x[..., d:], x[..., :d]), dim=-1)


def rotate_interleave(x):
    out = torch.empty_like(x)
    out[..., 0::2] = -x[..., 1::2]
    out[..., 1::2] = x[..., 0::2]
    return out


def cos_sin(shape):
    angles = randn(*shape, seed=3, scale=3)
    return torch.cos(angles), torch.sin(angles)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,rotate", [("half", rotate_half), ("interleave", rotate_interleave)])
@pytest.mark.parametrize("layout", ["BNSD", "BSND"])
def test_forward_backward(dtype, mode, rotate, layout):
    # LLaMA: x (B, N, S, D) with cos/sin (1, 1, S, D); or BSND with (1, S, 1, D).
    x = randn(2, 3, 5, 8, scale=2)
    cos, sin = cos_sin((1, 1, 5, 8) if layout == "BNSD" else (1, 3, 1, 8))
    check_against_formula(
        lambda x, c, s: torch_npu.npu_rotary_mul(x, c, s, rotary_mode=mode),
        lambda x, c, s: x * c + rotate(x) * s,
        [x, cos, sin],
        dtype,
        grads=(0, 1, 2),
    )


def test_rotate_matrix():
    x = randn(1, 2, 4, 8)
    cos, sin = cos_sin((1, 1, 4, 8))
    # The matrix that rotate_half is: x @ r == rotate_half(x).
    r = torch.zeros(8, 8)
    for i in range(4):
        r[i + 4, i] = -1.0
        r[i, i + 4] = 1.0
    got = torch_npu.npu_rotary_mul(on_npu(x), on_npu(cos), on_npu(sin), rotate=on_npu(r))
    torch.testing.assert_close(got.cpu(), x * cos + rotate_half(x) * sin)


def test_fp16_overflow_saturates():
    x = on_npu(torch.full((1, 1, 2, 4), 50000.0), torch.float16)
    ones = on_npu(torch.ones(1, 1, 2, 4), torch.float16)
    check_saturation(lambda x, c, s: torch_npu.npu_rotary_mul(x, c, s), [x, ones, ones])
