"""torch_npu.npu_fusion_attention against ``softmax(mask(scale * (q k^T + pse))) * keep /
keep_prob @ v`` written in plain torch: layouts BSH, SBH, BSND, BNSD and TND, grouped-query
heads, explicit masks of shape SS/B1SS/BNSS, sparse modes 0-4 (causal from the top left and
bottom right, bands), pse, dropout through keep_prob with a given or seeded mask, the returned
7-tuple, forward and backward of q, k, v in fp32 and fp16 (tolerances:
overlay_support.npu_op_checks)."""

import math

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    assert_close,
    check_grad_saturation,
    on_npu,
    randn,
    torch_npu,
)

B, N, SQ, SKV, D = 2, 4, 6, 8, 8
SCALE = 1 / math.sqrt(D)


def reference(q, k, v, mask=None, pse=None, scale=SCALE, keep=None, keep_prob=1.0):
    """(B, N, S, D) tensors; ``mask`` True = not attended; rows with nothing attended give 0."""
    groups = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(groups, dim=1)
    v = v.repeat_interleave(groups, dim=1)
    scores = q @ k.transpose(-1, -2)
    if pse is not None:
        scores = scores + pse
    scores = scores * scale
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    if mask is not None:
        probs = torch.where(mask.all(-1, keepdim=True), torch.zeros_like(probs), probs)
    if keep is not None:
        probs = probs * keep / keep_prob
    return probs @ v


def to_layout(t, layout):
    """A (B, N, S, D) tensor in ``layout``."""
    b, n, s, d = t.shape
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.transpose(1, 2)
    if layout == "BSH":
        return t.transpose(1, 2).reshape(b, s, n * d)
    if layout == "SBH":
        return t.permute(2, 0, 1, 3).reshape(s, b, n * d)
    raise AssertionError(layout)


def from_layout(t, layout, n):
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.transpose(1, 2)
    if layout == "BSH":
        b, s, h = t.shape
        return t.reshape(b, s, n, h // n).transpose(1, 2)
    s, b, h = t.shape
    return t.reshape(s, b, n, h // n).permute(1, 2, 0, 3)


def qkv(kv_heads=N, sq=SQ, skv=SKV):
    return (
        randn(B, N, sq, D, seed=1),
        randn(B, kv_heads, skv, D, seed=2),
        randn(B, kv_heads, skv, D, seed=3),
    )


def run_case(
    layout,
    dtype,
    kv_heads=N,
    atten_mask=None,
    ref_mask=None,
    sparse_mode=0,
    pse=None,
    sq=SQ,
    skv=SKV,
    **kwargs,
):
    q, k, v = qkv(kv_heads, sq, skv)
    tensors = [to_layout(t, layout).to(dtype) for t in (q, k, v)]
    npu_in = [on_npu(t, grad=True) for t in tensors]
    ref_in = [
        from_layout(t.float(), layout, h).detach().requires_grad_()
        for t, h in zip(tensors, (N, kv_heads, kv_heads))
    ]
    extra = {}
    if atten_mask is not None:
        extra["atten_mask"] = on_npu(atten_mask)
    if pse is not None:
        extra["pse"] = on_npu(pse, dtype)
    result = torch_npu.npu_fusion_attention(
        *npu_in, N, layout, scale=SCALE, sparse_mode=sparse_mode, **extra, **kwargs
    )
    ref_pse = pse.to(dtype).float() if pse is not None else None
    want = reference(*ref_in, mask=ref_mask, pse=ref_pse)
    out = result[0]
    assert out.shape == tensors[0].shape and out.is_contiguous()
    assert_close(out, to_layout(want, layout), dtype, "attention_out")
    grad = randn(*out.shape, seed=7).to(dtype)
    out.backward(on_npu(grad))
    to_layout(want, layout).backward(grad.float())
    for name, got, ref, heads in zip("qkv", npu_in, ref_in, (N, kv_heads, kv_heads)):
        assert_close(got.grad, to_layout(ref.grad, layout), dtype, f"gradient of {name}")
    return result, ref_in


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["BSH", "SBH", "BSND", "BNSD"])
def test_layouts_without_mask(layout, dtype):
    run_case(layout, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["BSH", "BNSD"])
def test_grouped_query_heads(layout, dtype):
    run_case(layout, dtype, kv_heads=2)


def causal_top_left(sq, skv):
    return torch.ones(sq, skv, dtype=torch.bool).triu(1)


def causal_bottom_right(sq, skv):
    return torch.ones(sq, skv, dtype=torch.bool).triu(skv - sq + 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["BSH", "SBH", "BNSD"])
def test_explicit_masks(layout, dtype):
    g = torch.Generator().manual_seed(11)
    ss = torch.rand(SQ, SKV, generator=g) < 0.4
    run_case(layout, dtype, atten_mask=ss, ref_mask=ss)
    b1ss = torch.rand(B, 1, SQ, SKV, generator=g) < 0.4
    run_case(layout, dtype, atten_mask=b1ss.to(torch.uint8), ref_mask=b1ss)
    bnss = torch.rand(B, N, SQ, SKV, generator=g) < 0.4
    run_case(layout, dtype, atten_mask=bnss, ref_mask=bnss, sparse_mode=1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["BSH", "SBH", "BNSD"])
def test_causal_sparse_modes(layout, dtype):
    compressed = torch.ones(2048, 2048, dtype=torch.bool).triu(1)
    run_case(layout, dtype, atten_mask=compressed, ref_mask=causal_top_left(SQ, SKV), sparse_mode=2)
    run_case(
        layout, dtype, atten_mask=compressed, ref_mask=causal_bottom_right(SQ, SKV), sparse_mode=3
    )
    # The plain causal mask of LLaMA training, given whole (mode 0), Sq == Skv.
    run_case(
        layout,
        dtype,
        atten_mask=causal_top_left(SKV, SKV),
        ref_mask=causal_top_left(SKV, SKV),
        sq=SKV,
    )


def band(sq, skv, pre, nxt, bottom_right):
    i = torch.arange(sq).reshape(-1, 1) + (skv - sq if bottom_right else 0)
    j = torch.arange(skv).reshape(1, -1)
    return (j > i + nxt) | (j < i - pre)


def test_band_and_token_limits():
    compressed = torch.ones(2048, 2048, dtype=torch.bool).triu(1)
    run_case(
        "BNSD",
        torch.float32,
        atten_mask=compressed,
        ref_mask=band(SQ, SKV, 2, 1, True),
        sparse_mode=4,
        pre_tockens=2,
        next_tockens=1,
    )
    # Mode 0 with a mask and token limits: the mask narrowed by the band from the top left.
    empty = torch.zeros(SQ, SKV, dtype=torch.bool)
    run_case(
        "BSH",
        torch.float32,
        atten_mask=empty,
        ref_mask=band(SQ, SKV, 1, 0, False),
        pre_tockens=1,
        next_tockens=0,
    )


def test_without_mask_sparse_parameters_do_not_apply():
    run_case("BNSD", torch.float32, sparse_mode=3, pre_tockens=0, next_tockens=0)


def test_fully_masked_rows_give_zeros():
    mask = torch.zeros(SQ, SKV, dtype=torch.bool)
    mask[2] = True
    result, _ = run_case("BNSD", torch.float32, atten_mask=mask, ref_mask=mask)
    assert torch.count_nonzero(result[0].detach().cpu()[:, :, 2]) == 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_pse(dtype):
    pse = randn(1, N, SQ, SKV, seed=13)
    run_case("BSH", dtype, pse=pse)


def test_returned_tuple():
    q, k, v = (on_npu(to_layout(t, "BSH")) for t in qkv())
    mask = causal_bottom_right(SQ, SKV)
    out, smax, ssum, reserved, seed, offset, numels = torch_npu.npu_fusion_attention(
        q, k, v, N, "BSH", atten_mask=on_npu(mask), scale=SCALE
    )
    assert out.shape == (B, SQ, N * D)
    for stat in (smax, ssum):
        assert stat.shape == (B, N, SQ, 8) and stat.dtype == torch.float32
        assert stat.device.type == "npu"
    assert reserved.numel() == 0
    assert (seed, offset, numels) == (0, 0, 0)
    scores = (
        from_layout(q.cpu(), "BSH", N) @ from_layout(k.cpu(), "BSH", N).transpose(-1, -2) * SCALE
    ).masked_fill(mask, float("-inf"))
    want_max = scores.amax(-1)
    want_sum = torch.exp(scores - want_max.unsqueeze(-1)).sum(-1)
    torch.testing.assert_close(smax.cpu()[..., 3], want_max)
    torch.testing.assert_close(ssum.cpu()[..., 0], want_sum)


def bits(mask, n):
    values = mask.cpu().tolist()
    return torch.tensor([(values[i // 8] >> (i % 8)) & 1 for i in range(n)], dtype=torch.float32)


def assert_same_gradients(out, want, npu_in, ref_in, dtype):
    """One output gradient back through the NPU's result and the reference: the inputs'
    gradients agree."""
    grad = randn(*want.shape, seed=8).to(dtype)
    out.backward(on_npu(grad))
    want.backward(grad.float())
    for got, ref in zip(npu_in, ref_in):
        assert_close(got.grad, ref.grad, dtype, "gradient")


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_with_a_given_mask(dtype):
    keep_prob = 0.7
    q, k, v = qkv()
    drop = torch_npu.npu_dropout_gen_mask([B, N, SQ, SKV], 1 - keep_prob, device="npu")
    keep = bits(drop, B * N * SQ * SKV).reshape(B, N, SQ, SKV)
    npu_in = [on_npu(t, dtype, grad=True) for t in (q, k, v)]
    ref_in = [t.to(dtype).float().requires_grad_() for t in (q, k, v)]
    result = torch_npu.npu_fusion_attention(
        *npu_in, N, "BNSD", scale=SCALE, keep_prob=keep_prob, dropout_mask=drop, seed=5, offset=16
    )
    want = reference(*ref_in, keep=keep, keep_prob=keep_prob)
    assert_close(result[0], want, dtype, "attention_out")
    assert result[4:] == (5, 16, B * N * SQ * SKV)
    assert_same_gradients(result[0], want, npu_in, ref_in, dtype)


def test_seeded_dropout_repeats_and_drops_the_right_share():
    q, k, v = (on_npu(t) for t in qkv())
    first = torch_npu.npu_fusion_attention(q, k, v, N, "BNSD", keep_prob=0.5, seed=123)
    again = torch_npu.npu_fusion_attention(q, k, v, N, "BNSD", keep_prob=0.5, seed=123)
    other = torch_npu.npu_fusion_attention(q, k, v, N, "BNSD", keep_prob=0.5, seed=124)
    assert torch.equal(first[0].cpu(), again[0].cpu())
    assert not torch.equal(first[0].cpu(), other[0].cpu())
    # Seed 0 draws a seed from torch's generator and returns it. With q = 0 every key weighs
    # the same, and with v = 1 each output element is (kept share of the keys) / keep_prob:
    # over 2*4*32*64 Bernoulli(0.5) draws the mean is 1 within 0.01 (one standard deviation).
    sq, skv = 32, 64
    zeros, ones = on_npu(torch.zeros(B, N, sq, D)), on_npu(torch.ones(B, N, skv, D))
    keys = on_npu(randn(B, N, skv, D, seed=2))
    torch.manual_seed(7)
    out = torch_npu.npu_fusion_attention(zeros, keys, ones, N, "BNSD", keep_prob=0.5)
    torch.manual_seed(7)
    same_draw = torch_npu.npu_fusion_attention(zeros, keys, ones, N, "BNSD", keep_prob=0.5)
    assert out[4] != 0 and out[4] == same_draw[4]
    assert out[6] == B * N * sq * skv
    assert abs(out[0].cpu().mean().item() - 1.0) < 0.05


@pytest.mark.parametrize("dtype", DTYPES)
def test_tnd_varlen(dtype):
    lens_q, lens_kv = [3, 5], [4, 6]
    cum_q, cum_kv = [3, 8], [4, 10]
    q, k, v = randn(8, N, D, seed=1), randn(10, 2, D, seed=2), randn(10, 2, D, seed=3)
    npu_in = [on_npu(t, dtype, grad=True) for t in (q, k, v)]
    ref_in = [t.to(dtype).float().requires_grad_() for t in (q, k, v)]
    out = torch_npu.npu_fusion_attention(
        *npu_in,
        N,
        "TND",
        scale=SCALE,
        atten_mask=on_npu(torch.ones(2048, 2048, dtype=torch.bool).triu(1)),
        sparse_mode=3,
        actual_seq_qlen=cum_q,
        actual_seq_kvlen=cum_kv,
    )
    pieces, s0, k0 = [], 0, 0
    for lq, lk in zip(lens_q, lens_kv):
        qb = ref_in[0][s0 : s0 + lq].transpose(0, 1).unsqueeze(0)
        kb = ref_in[1][k0 : k0 + lk].transpose(0, 1).unsqueeze(0)
        vb = ref_in[2][k0 : k0 + lk].transpose(0, 1).unsqueeze(0)
        pieces.append(reference(qb, kb, vb, mask=causal_bottom_right(lq, lk))[0].transpose(0, 1))
        s0, k0 = s0 + lq, k0 + lk
    want = torch.cat(pieces)
    assert_close(out[0], want, dtype, "attention_out")
    assert out[1].shape == (8, N, 8)
    assert_same_gradients(out[0], want, npu_in, ref_in, dtype)


def test_fp16_gradient_overflow_saturates():
    # q = k = 0: uniform probabilities 1/Skv; dv = probs^T dout sums Sq rows: 8/2 * 30000.
    q = on_npu(torch.zeros(1, 1, 8, 4), torch.float16)
    k = on_npu(torch.zeros(1, 1, 2, 4), torch.float16)
    v = on_npu(torch.ones(1, 1, 2, 4), torch.float16)
    check_grad_saturation(
        lambda v: torch_npu.npu_fusion_attention(q, k, v, 1, "BNSD")[0], v, grad_value=30000.0
    )


def test_unsupported_modes_say_so():
    q, k, v = (on_npu(t) for t in qkv())
    mask = on_npu(torch.ones(2048, 2048, dtype=torch.bool).triu(1))
    with pytest.raises(NotImplementedError, match="sparse_mode=6"):
        torch_npu.npu_fusion_attention(q, k, v, N, "BNSD", atten_mask=mask, sparse_mode=6)
    with pytest.raises(RuntimeError, match="input_layout"):
        torch_npu.npu_fusion_attention(q, k, v, N, "NSD")
