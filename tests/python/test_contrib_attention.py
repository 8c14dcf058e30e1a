"""torch_npu.contrib.function's attention helpers: fuse_add_softmax_dropout (fused when the NPU's
kernel takes the shape, else the unfused path) and fused_attention (BERT's self-attention block,
with its once-per-process compatibility check), against their formulas in fp32."""

import math
import warnings

import pytest
import torch
import torch.nn.functional as F

from overlay_support.npu_op_checks import FP16, FP32, on_npu, randn, torch_npu
from torch_npu.contrib.function import fuse_add_softmax_dropout, fused_attention
from torch_npu.contrib.module import DropoutWithByteMask

NZ, ND = 29, 2


def _probs(mask, scores, head_size):
    return torch.softmax(mask.float() + scores.float() / math.sqrt(head_size), dim=-1)


@pytest.mark.parametrize("shape", [(2, 16, 128, 128), (2, 3, 10, 10)])  # fused, unfused
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_without_dropout_it_is_the_softmax_of_the_scaled_sum(shape, dtype):
    mask, scores = randn(*shape, seed=1).to(dtype), randn(*shape, seed=2, scale=3).to(dtype)
    want = _probs(mask, scores, 64).to(dtype)
    for training, p, layer in (
        (False, 0.4, DropoutWithByteMask(0.4).eval()),
        (True, 0.0, DropoutWithByteMask(0.0)),
    ):
        got = fuse_add_softmax_dropout(training, layer, on_npu(mask), on_npu(scores), 64, p=p)
        assert got.dtype == dtype and got.device.type == "npu"
        torch.testing.assert_close(got.cpu(), want, **(FP16 if dtype == torch.float16 else FP32))


def test_the_fused_shape_drops_with_p_the_unfused_one_with_the_layer():
    torch.manual_seed(3)
    fused, unfused = (2, 16, 128, 128), (2, 3, 10, 10)
    for shape, p, layer, rate in (
        (fused, 0.3, DropoutWithByteMask(0.0), 0.3),
        (unfused, 0.0, DropoutWithByteMask(0.5), 0.5),
    ):
        mask, scores = randn(*shape, seed=4), randn(*shape, seed=5)
        want = _probs(mask, scores, 16)
        got = fuse_add_softmax_dropout(True, layer, on_npu(mask), on_npu(scores), 16, p=p).cpu()
        kept = got != 0
        assert abs(1 - kept.float().mean().item() - rate) < 0.05, (shape, kept.float().mean())
        torch.testing.assert_close(got[kept], want[kept] / (1 - rate), **FP32)


def test_the_gradient_reaches_the_scores():
    shape = (2, 16, 128, 128)
    mask, scores = randn(*shape, seed=6), randn(*shape, seed=7)
    leaf = on_npu(scores, grad=True)
    weights = randn(*shape, seed=8)
    (
        fuse_add_softmax_dropout(False, None, on_npu(mask), leaf, 4) * on_npu(weights)
    ).sum().backward()
    ref = scores.clone().requires_grad_(True)
    (_probs(mask, ref, 4) * weights).sum().backward()
    torch.testing.assert_close(leaf.grad.cpu(), ref.grad, **FP32)


# BERT-base's block: 2 sequences of 16 tokens, 12 heads of 64.
B, S, H = 2, 16, 768


def _attention_inputs(dtype, formats=True):
    g = torch.Generator().manual_seed(9)
    hidden = torch.randn(B * S, H, generator=g)
    mask = torch.zeros(B, 1, S, S)
    mask[1, :, :, S - 4 :] = -10000.0  # the second sequence's last four tokens are padding
    kernels = [torch.randn(H, H, generator=g) * 0.03 for _ in range(3)]
    biases = [torch.randn(H, generator=g) * 0.1 for _ in range(3)]
    host = [t.to(dtype) for t in [hidden, mask] + kernels + biases]
    npu = [on_npu(t) for t in host]
    if formats:
        npu = [torch_npu.npu_format_cast(t, NZ if i < 5 else ND) for i, t in enumerate(npu)]
    return host, [t.requires_grad_(i != 1) for i, t in enumerate(npu)]


def _reference_context(source, mask, kernels, biases, scale):
    def heads(t):
        return t.reshape(B, S, H // 64, 64).permute(0, 2, 1, 3)

    q, k, v = (heads(source @ w + b) for w, b in zip(kernels, biases))
    probs = torch.softmax(q @ k.transpose(-1, -2) * scale + mask, dim=-1)
    return (probs @ v).permute(0, 2, 1, 3).reshape(B * S, H)


@pytest.fixture
def fresh_check():
    fused_attention._check_compatibility_once.called = False
    yield
    fused_attention._check_compatibility_once.called = False


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_fused_attention_is_bert_self_attention_forward_and_backward(dtype, fresh_check):
    host, npu = _attention_inputs(dtype)
    got = torch_npu.contrib.npu_fused_attention(*npu, scale=0.125, keep_prob=1.0)
    ref_in = [t.float().requires_grad_(i != 1) for i, t in enumerate(host)]
    want = _reference_context(ref_in[0], ref_in[1], ref_in[2:5], ref_in[5:8], 0.125)
    tol = FP16 if dtype == torch.float16 else dict(rtol=1e-4, atol=1e-4)
    assert got.dtype == dtype and got.shape == (B * S, H)
    torch.testing.assert_close(got.cpu().float(), want.detach().to(dtype).float(), **tol)
    grad = randn(B * S, H, seed=10).to(dtype)
    got.backward(on_npu(grad))
    want.backward(grad.float())
    for i in (0, 2, 3, 4, 5, 6, 7):
        torch.testing.assert_close(
            npu[i].grad.cpu().float(),
            ref_in[i].grad.to(dtype).float(),
            **(FP16 if dtype == torch.float16 else dict(rtol=1e-3, atol=1e-3)),
        )
    assert npu[1].grad is None  # the mask gets none, as on the NPU


def test_fused_attention_with_layernorm_returns_the_context_of_the_norm_and_the_norm(fresh_check):
    host, npu = _attention_inputs(torch.float32)
    gamma, beta = randn(H, seed=12) * 0.1 + 1, randn(H, seed=13) * 0.1
    gamma_npu, beta_npu = on_npu(gamma, grad=True), on_npu(beta, grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        context, norm = torch_npu.contrib.npu_fused_attention_with_layernorm(
            *npu, gamma_npu, beta_npu, 0.125, 1.0
        )
    assert any("deprecated" in str(w.message) for w in caught)
    want_norm = F.layer_norm(host[0], (H,), gamma, beta, 1e-5)
    want = _reference_context(want_norm, host[1], host[2:5], host[5:8], 0.125)
    torch.testing.assert_close(norm.cpu(), want_norm, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(context.cpu(), want, rtol=1e-4, atol=1e-4)
    (context.sum() + norm.sum()).backward()
    assert gamma_npu.grad is not None and beta_npu.grad is not None and npu[0].grad is not None


def test_keep_prob_drops_attention_probabilities(fresh_check):
    torch.manual_seed(14)
    _, npu = _attention_inputs(torch.float32)
    full = torch_npu.contrib.npu_fused_attention(*npu, scale=0.125, keep_prob=1.0)
    dropped = torch_npu.contrib.npu_fused_attention(*npu, scale=0.125, keep_prob=0.5)
    assert not torch.allclose(full.cpu(), dropped.cpu())
    nothing = torch_npu.contrib.npu_fused_attention(*npu, scale=0.125)  # keep_prob=0: all
    assert not nothing.cpu().any()


def test_the_compatibility_check_wants_the_fused_kernels_formats_and_shapes(fresh_check):
    check = fused_attention._check_compatibility_once
    _, npu = _attention_inputs(torch.float32)
    check(*npu)  # BERT's formats and shapes pass
    assert check.called
    check.called = False
    _, plain = _attention_inputs(torch.float32, formats=False)
    assert not fused_attention._is_format_matched(plain)
    assert fused_attention._is_format_matched(npu)
    with pytest.raises(RuntimeError, match="format not matches"):
        check(*plain)
    check(*plain)  # checked once per process, whatever the outcome: not again
    check.called = False
    rows = [torch_npu.npu_format_cast(on_npu(torch.ones(30, H)), NZ)] + npu[1:]
    with pytest.raises(RuntimeError, match="shape of hidden_states not matches"):
        check(*rows)
    check.called = False
    mask = [npu[0], torch_npu.npu_format_cast(on_npu(torch.zeros(B, 2, S, S)), NZ)] + npu[2:]
    with pytest.raises(RuntimeError, match="shape of attention_mask not matches"):
        check(*mask)
    check.called = False
    nd_gamma = torch_npu.npu_format_cast(on_npu(torch.ones(H)), NZ)
    with pytest.raises(RuntimeError, match="gamma or beta format not matches"):
        check(*npu, nd_gamma, on_npu(torch.ones(H)))
    check.called = False
    with pytest.raises(RuntimeError, match="fused attention check compatibility failed"):
        torch_npu.contrib.npu_fused_attention(*plain)
