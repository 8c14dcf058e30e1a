"""torch_npu.npu_bert_apply_adam (ApplyAdamV2, modes adam and mbart_adam), npu_apply_adam
(ApplyAdam) and npu_apply_adam_w (ApplyAdamW) against their update rules written in plain torch,
several steps, fp32 and fp16 state (fp16: the rule in fp32 on the fp16 values, rounded once per
step: tolerances of overlay_support.npu_op_checks), and an fp16 parameter that saturates."""

import math

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    FP16_MAX,
    assert_close,
    float_status,
    on_npu,
    randn,
    torch_npu,
)


def bert_adam_rule(var, m, v, g, lr, b1, b2, eps, max_norm, global_norm, wd, step_size, mode):
    if mode == 0 and max_norm > 0 and global_norm > 1:
        g = g / global_norm
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    if mode == 0:
        update = m / (torch.sqrt(v) + eps)
        if wd > 0:
            update = update + wd * var
        return var - lr * update, m, v
    step = lr if step_size is None else step_size
    return var - step * m / (torch.sqrt(v) + eps) - lr * wd * var, m, v


def state(dtype, n=257):
    return (
        on_npu(randn(n, seed=1, scale=3), dtype),
        on_npu(randn(n, seed=2) * 0.1, dtype),
        on_npu(randn(n, seed=3).abs() * 0.01, dtype),
    )


def host(ts):
    return [t.cpu().float() for t in ts]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "case",
    [
        dict(max_norm=-1.0, global_norm=0.0, wd=0.0, step_size=None, mode=0),
        dict(max_norm=1.0, global_norm=4.0, wd=0.01, step_size=None, mode=0),  # clipped
        dict(max_norm=1.0, global_norm=0.5, wd=0.01, step_size=None, mode=0),  # norm <= 1: not
        dict(max_norm=0.0, global_norm=0.0, wd=0.01, step_size=2e-3, mode=1),  # XLM's mbart
        dict(max_norm=0.0, global_norm=0.0, wd=0.0, step_size=None, mode=1),  # step_size = lr
    ],
)
def test_npu_bert_apply_adam(dtype, case):
    var, m, v = state(dtype)
    want = host((var, m, v))
    lr, b1, b2, eps = 1e-2, 0.9, 0.99, 1e-6
    for step in range(3):
        grad = on_npu(randn(257, seed=10 + step), dtype)
        out = torch_npu.npu_bert_apply_adam(
            lr,
            b1,
            b2,
            eps,
            grad,
            case["max_norm"],
            case["global_norm"],
            case["wd"],
            case["step_size"],
            adam_mode=case["mode"],
            out=(var, m, v),
        )
        assert out[0] is var and out[1] is m and out[2] is v
        want = bert_adam_rule(
            *want,
            grad.cpu().float(),
            lr,
            b1,
            b2,
            eps,
            case["max_norm"],
            case["global_norm"],
            case["wd"],
            case["step_size"],
            case["mode"],
        )
        want = [w.to(dtype).float() for w in want]  # the NPU stores each step in dtype
        for got, ref, name in zip((var, m, v), want, ("var", "m", "v")):
            assert_close(got, ref, dtype, f"{name} after step {step + 1}")


def test_npu_bert_apply_adam_calls_of_ascend_code():
    var, m, v = state(torch.float32)
    grad = on_npu(randn(257, seed=4))
    # BERT's NpuFusedBertAdamV2: positional scalars, global_grad_norm 0, out=(...).
    data, exp_avg, exp_avg_sq = torch.npu_bert_apply_adam(
        1e-3, 0.9, 0.999, 1e-6, grad, -1.0, 0, 0.01, out=(var, m, v)
    )
    assert data is var and exp_avg is m and exp_avg_sq is v
    # The older keyword spelling var=, m=, v=.
    torch_npu.npu_bert_apply_adam(1e-3, 0.9, 0.999, 1e-6, grad, -1.0, 0, 0.01, var=var, m=m, v=v)
    with pytest.raises(RuntimeError, match="out="):
        torch_npu.npu_bert_apply_adam(1e-3, 0.9, 0.999, 1e-6, grad, -1.0, 0, 0.01)


def test_npu_bert_apply_adam_fp16_parameter_saturates():
    var = on_npu(torch.full((16,), 65000.0), torch.float16)
    m, v = on_npu(torch.zeros(16), torch.float16), on_npu(torch.zeros(16), torch.float16)
    grad = on_npu(torch.full((16,), -1.0), torch.float16)
    float_status.clear()
    torch_npu.npu_bert_apply_adam(1000.0, 0.9, 0.99, 1e-6, grad, -1.0, 0.0, 0.0, out=(var, m, v))
    assert var.cpu().float().max().item() == FP16_MAX
    assert torch_npu.npu.utils.npu_check_overflow(0.0)


def apply_adam_rule(var, m, v, g, b1p, b2p, lr, b1, b2, eps, nesterov):
    m = m + (1 - b1) * (g - m)
    v = v + (1 - b2) * (g * g - v)
    lr_t = lr * math.sqrt(1 - b2p) / (1 - b1p)
    num = b1 * m + (1 - b1) * g if nesterov else m
    return var - lr_t * num / (eps + torch.sqrt(v)), m, v


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nesterov", [False, True])
def test_npu_apply_adam(dtype, nesterov):
    var, m, v = state(dtype)
    want = host((var, m, v))
    b1, b2 = 0.9, 0.999
    for step in range(1, 4):
        grad = on_npu(randn(257, seed=20 + step), dtype)
        out = torch_npu.npu_apply_adam(
            b1**step, b2**step, 1e-2, b1, b2, 1e-8, grad, False, nesterov, out=(var, m, v)
        )
        assert out[0] is var
        want = apply_adam_rule(
            *want, grad.cpu().float(), b1**step, b2**step, 1e-2, b1, b2, 1e-8, nesterov
        )
        want = [w.to(dtype).float() for w in want]
        for got, ref in zip((var, m, v), want):
            assert_close(got, ref, dtype, f"step {step}")


def apply_adam_w_rule(var, m, v, g, b1p, b2p, lr, wd, b1, b2, eps, max_v, amsgrad, maximize):
    g = -g if maximize else g
    m = m * b1 + (1 - b1) * g
    v = v * b2 + (1 - b2) * g * g
    var = var * (1 - lr * wd)
    second = torch.maximum(max_v, v) if amsgrad else v
    denom = torch.sqrt(second / (1 - b2p * b2)) + eps
    return var - lr * m / (1 - b1p * b1) / denom, m, v


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("amsgrad,maximize", [(False, False), (False, True), (True, False)])
def test_npu_apply_adam_w(dtype, amsgrad, maximize):
    var, m, v = state(dtype)
    want = host((var, m, v))
    max_v = on_npu(randn(257, seed=5).abs() * 0.02, dtype) if amsgrad else None
    b1, b2, lr, wd = 0.9, 0.999, 1e-2, 0.05
    for step in range(3):
        grad = on_npu(randn(257, seed=30 + step), dtype)
        torch_npu.npu_apply_adam_w(
            b1**step,
            b2**step,
            lr,
            wd,
            b1,
            b2,
            1e-8,
            grad,
            max_v,
            amsgrad,
            maximize,
            out=(var, m, v),
        )
        want = apply_adam_w_rule(
            *want,
            grad.cpu().float(),
            b1**step,
            b2**step,
            lr,
            wd,
            b1,
            b2,
            1e-8,
            max_v.cpu().float() if amsgrad else None,
            amsgrad,
            maximize,
        )
        want = [w.to(dtype).float() for w in want]
        for got, ref in zip((var, m, v), want):
            assert_close(got, ref, dtype, f"step {step}")
