"""torch_npu.npu_masked_causal_conv1d and its backward against the causal depthwise
convolution written step by step in plain fp32 torch: ``y[s] = w0 x[s-2] + w1 x[s-1] + w2 x[s]``,
masked per (batch, step) (tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import DTYPES, assert_close, on_npu, randn, torch_npu

S, B, H = 6, 2, 8


def reference(x, w, mask):
    past = torch.cat([torch.zeros(2, *x.shape[1:]), x])
    y = w[0] * past[:-2] + w[1] * past[1:-1] + w[2] * past[2:]
    return y * mask.t().unsqueeze(-1) if mask is not None else y


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("masked", [False, True])
def test_forward_backward(dtype, masked):
    x, w = randn(S, B, H, seed=1).to(dtype), randn(3, H, seed=2).to(dtype)
    mask = torch.rand(B, S, generator=torch.Generator().manual_seed(3)) > 0.3 if masked else None
    xs, ws = on_npu(x, grad=True), on_npu(w, grad=True)
    got = torch_npu.npu_masked_causal_conv1d(xs, ws, mask=None if mask is None else on_npu(mask))
    xr, wr = x.float().requires_grad_(), w.float().requires_grad_()
    want = reference(xr, wr, mask)
    assert_close(got, want, dtype, "output")
    g = randn(S, B, H, seed=4).to(dtype)
    got.backward(on_npu(g))
    want.backward(g.float())
    assert_close(xs.grad, xr.grad, dtype, "input gradient")
    assert_close(ws.grad, wr.grad, dtype, "weight gradient")
    gx, gw = torch_npu.npu_masked_causal_conv1d_backward(
        on_npu(g), on_npu(x), on_npu(w), mask=None if mask is None else on_npu(mask)
    )
    assert_close(gx, xr.grad, dtype, "backward's grad_input")
    assert_close(gw, wr.grad, dtype, "backward's grad_weight")


def test_bad_shapes_are_refused():
    with pytest.raises(RuntimeError, match=r"weight must be \[3, H\]"):
        torch_npu.npu_masked_causal_conv1d(on_npu(randn(S, B, H)), on_npu(randn(4, H)))
    with pytest.raises(RuntimeError, match="mask must be bool"):
        torch_npu.npu_masked_causal_conv1d(
            on_npu(randn(S, B, H)),
            on_npu(randn(3, H)),
            mask=on_npu(torch.ones(S, B, dtype=torch.bool)),
        )
