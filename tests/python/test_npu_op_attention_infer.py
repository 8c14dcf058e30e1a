"""torch_npu's inference attention (npu_prompt_flash_attention, npu_incre_flash_attention,
npu_fused_infer_attention_score) against ``softmax(scale * q k^T + pse_shift, mask) @ v``
written in plain torch, one batch at a time over its valid query and key lengths: layouts BSH,
BSND, BNSD, BNSD_BSND and TND, grouped-query heads, masks of the documented shapes, sparse
modes 0 (with the prompt op's default next_tokens=0: causal from the top left), 2, 3 and 4,
actual sequence lengths (rows past a query's length are zeros), paged key/value through
block_table, the fused op's decode branch, softmax_lse and rope parts. fp32 and fp16
(tolerances: overlay_support.npu_op_checks); the quantisation parameters raise naming
themselves; a backward through these inference operators raises, as torch_npu defines none."""

import math

import pytest
import torch

from overlay_support.npu_op_checks import (
    check_no_derivative,
    DTYPES,
    assert_close,
    on_npu,
    randn,
    torch_npu,
)

B, N, SQ, SKV, D = 2, 4, 5, 7, 8
SCALE = 1 / math.sqrt(D)


def reference(q, k, v, mask=None, pse=None, q_lens=None, kv_lens=None, scale=SCALE):
    """(B, N, S, D) fp32 tensors, ``mask`` (B or 1, 1 or N, Sq, Skv) True = not attended;
    returns (out, lse (B, N, Sq))."""
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
    out = torch.zeros(q.shape[:3] + (v.shape[-1],))
    lse = torch.full(q.shape[:3], float("inf"))
    for b in range(q.shape[0]):
        s1 = q.shape[2] if q_lens is None else q_lens[b]
        s2 = k.shape[2] if kv_lens is None else kv_lens[b]
        scores = q[b, :, :s1] @ k[b, :, :s2].transpose(-1, -2) * scale
        if pse is not None:
            scores = scores + pse[b if pse.shape[0] > 1 else 0][:, :s1, :s2]
        if mask is not None:
            scores = scores.masked_fill(
                mask[b if mask.shape[0] > 1 else 0][:, :s1, :s2], float("-inf")
            )
        out[b, :, :s1] = torch.softmax(scores, -1) @ v[b, :, :s2]
        lse[b, :, :s1] = torch.logsumexp(scores, -1)
    return out, lse


def bnsd_to(t, layout):
    b, n, s, d = t.shape
    if layout in ("BNSD", "BNSD_BSND"):
        return t
    if layout == "BSND":
        return t.transpose(1, 2)
    return t.transpose(1, 2).reshape(b, s, n * d)  # BSH


def qkv(dtype, sq=SQ, skv=SKV, kv_heads=N, seed=1):
    q = randn(B, N, sq, D, seed=seed).to(dtype)
    k = randn(B, kv_heads, skv, D, seed=seed + 1).to(dtype)
    v = randn(B, kv_heads, skv, D, seed=seed + 2).to(dtype)
    return q, k, v


def causal(sq, skv, shift=0):
    return torch.ones(sq, skv, dtype=torch.bool).triu(1 + shift)


def compressed():
    return causal(2048, 2048)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["BSH", "BSND", "BNSD", "BNSD_BSND"])
def test_prompt_layouts_and_grouped_heads(layout, dtype):
    q, k, v = qkv(dtype, kv_heads=2)
    out = torch_npu.npu_prompt_flash_attention(
        *[on_npu(bnsd_to(t, layout)) for t in (q, k, v)],
        num_heads=N,
        num_key_value_heads=2,
        scale_value=SCALE,
        input_layout=layout,
    )
    want = reference(q.float(), k.float(), v.float())[0]
    expected = want.transpose(1, 2) if layout == "BNSD_BSND" else bnsd_to(want, layout)
    assert out.shape == expected.shape
    assert_close(out, expected, dtype, layout)


@pytest.mark.parametrize("dtype", DTYPES)
def test_prompt_masks_lengths_and_pse(dtype):
    q, k, v = qkv(dtype, seed=4)
    g = torch.Generator().manual_seed(5)
    mask = torch.rand(B, SQ, SKV, generator=g) < 0.3
    pse = randn(B, N, SQ, SKV, seed=6).to(dtype)
    q_lens, kv_lens = [3, 5], [7, 4]
    # sparse mode 0 with the default next_tokens=0 narrows the mask to the top-left causal band
    out = torch_npu.npu_prompt_flash_attention(
        *[on_npu(bnsd_to(t, "BSH")) for t in (q, k, v)],
        atten_mask=on_npu(mask),
        pse_shift=on_npu(pse),
        actual_seq_lengths=q_lens,
        actual_seq_lengths_kv=kv_lens,
        num_heads=N,
        scale_value=SCALE,
    )
    want_mask = (mask | causal(SQ, SKV)).unsqueeze(1)
    want = reference(q.float(), k.float(), v.float(), want_mask, pse.float(), q_lens, kv_lens)[0]
    assert_close(out, bnsd_to(want, "BSH"), dtype, "mask, pse, lengths")
    assert not bool(out.cpu()[0, 3:].any())  # rows past the query length


@pytest.mark.parametrize(
    "sparse_mode, pre, nxt, want",
    [
        (1, 2147483647, 0, lambda: torch.zeros(SQ, SKV, dtype=torch.bool)),
        (2, 2147483647, 2147483647, lambda: causal(SQ, SKV)),
        (3, 2147483647, 2147483647, lambda: causal(SQ, SKV, SKV - SQ)),
        (4, 1, 0, lambda: causal(SQ, SKV, SKV - SQ) | ~causal(SQ, SKV, SKV - SQ - 2)),
    ],
)
def test_prompt_sparse_modes(sparse_mode, pre, nxt, want):
    q, k, v = qkv(torch.float32, seed=7)
    given = torch.zeros(SQ, SKV, dtype=torch.bool) if sparse_mode == 1 else compressed()
    out = torch_npu.npu_prompt_flash_attention(
        *[on_npu(t) for t in (q, k, v)],
        atten_mask=on_npu(given),
        num_heads=N,
        scale_value=SCALE,
        input_layout="BNSD",
        sparse_mode=sparse_mode,
        pre_tokens=pre,
        next_tokens=nxt,
    )
    ref = reference(q, k, v, want().reshape(1, 1, SQ, SKV))[0]
    assert_close(out, ref, torch.float32, f"sparse_mode {sparse_mode}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_prompt_tnd_cumulative_lengths(dtype):
    lens = [3, 4]
    q = randn(sum(lens), N, D, seed=8).to(dtype)
    k, v = randn(sum(lens), N, D, seed=9).to(dtype), randn(sum(lens), N, D, seed=10).to(dtype)
    ends = [3, 7]
    out = torch_npu.npu_prompt_flash_attention(
        on_npu(q),
        on_npu(k),
        on_npu(v),
        num_heads=N,
        scale_value=SCALE,
        input_layout="TND",
        actual_seq_lengths=ends,
        actual_seq_lengths_kv=ends,
        sparse_mode=3,
        atten_mask=on_npu(compressed()),
    )
    parts = []
    for s, e in ((0, 3), (3, 7)):
        t = [x[s:e].float().transpose(0, 1).unsqueeze(0) for x in (q, k, v)]
        parts.append(
            reference(*t, causal(e - s, e - s).reshape(1, 1, e - s, e - s))[0][0].transpose(0, 1)
        )
    assert_close(out, torch.cat(parts), dtype, "TND")


@pytest.mark.parametrize("dtype", DTYPES)
def test_incre_decode_with_mask_lengths_and_gqa(dtype):
    q, k, v = qkv(dtype, sq=1, kv_heads=2, seed=11)
    mask = torch.zeros(B, SKV, dtype=torch.bool)
    mask[0, 1] = True
    kv_lens = [6, 3]
    out = torch_npu.npu_incre_flash_attention(
        *[on_npu(bnsd_to(t, "BSH")) for t in (q, k, v)],
        atten_mask=on_npu(mask),
        actual_seq_lengths=kv_lens,
        num_heads=N,
        num_key_value_heads=2,
        scale_value=SCALE,
    )
    want = reference(q.float(), k.float(), v.float(), mask.reshape(B, 1, 1, SKV), kv_lens=kv_lens)[
        0
    ]
    assert_close(out, bnsd_to(want, "BSH"), dtype, "decode")


@pytest.mark.parametrize("dtype", DTYPES)
def test_incre_paged_key_value(dtype):
    q, k, v = qkv(dtype, sq=1, seed=12)
    kv_lens, block = [7, 5], 4
    # each batch's keys in blocks of 4 tokens, scattered over a pool of 5 blocks (BSH rows)
    table = torch.tensor([[3, 0], [1, 4]], dtype=torch.int32)
    pools = []
    for t in (k, v):
        pool = torch.zeros(5, block, N * D, dtype=dtype)
        rows = bnsd_to(t, "BSH")  # (B, SKV, H)
        padded = torch.cat([rows, rows.new_zeros(B, 2 * block - SKV, N * D)], 1)
        for b in range(B):
            for j in range(2):
                pool[int(table[b, j])] = padded[b, j * block : (j + 1) * block]
        pools.append(pool)
    out = torch_npu.npu_incre_flash_attention(
        on_npu(bnsd_to(q, "BSH")),
        on_npu(pools[0]),
        on_npu(pools[1]),
        block_table=on_npu(table),
        block_size=block,
        actual_seq_lengths=kv_lens,
        num_heads=N,
        scale_value=SCALE,
    )
    want = reference(q.float(), k.float(), v.float(), kv_lens=kv_lens)[0]
    assert_close(out, bnsd_to(want, "BSH"), dtype, "paged")


@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_prefill_decode_and_lse(dtype):
    q, k, v = qkv(dtype, seed=13)
    mask = causal(SQ, SKV)
    out, lse = torch_npu.npu_fused_infer_attention_score(
        *[on_npu(t) for t in (q, k, v)],
        atten_mask=on_npu(mask),
        num_heads=N,
        scale=SCALE,
        input_layout="BNSD",
        softmax_lse_flag=True,
        sparse_mode=0,
        next_tokens=0,
    )
    want, want_lse = reference(q.float(), k.float(), v.float(), mask.reshape(1, 1, SQ, SKV))
    assert_close(out, want, dtype, "prefill")
    assert lse.dtype == torch.float32 and lse.shape == (B, N, SQ, 1)
    torch.testing.assert_close(lse.cpu(), want_lse.unsqueeze(-1), rtol=1e-5, atol=1e-5)
    # one query token: the decode branch ignores the sparse parameters
    q1 = q[:, :, :1].contiguous()
    out1, lse1 = torch_npu.npu_fused_infer_attention_score(
        on_npu(bnsd_to(q1, "BSND")),
        on_npu(bnsd_to(k, "BSND")),
        on_npu(bnsd_to(v, "BSND")),
        num_heads=N,
        scale=SCALE,
        input_layout="BSND",
        next_tokens=0,
        sparse_mode=0,
        actual_seq_lengths_kv=[SKV, 4],
    )
    want1 = reference(q1.float(), k.float(), v.float(), kv_lens=[SKV, 4])[0]
    assert_close(out1, bnsd_to(want1, "BSND"), dtype, "decode")
    assert lse1.shape == (1,) and float(lse1.cpu()) == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_rope_parts(dtype):
    q, k, v = qkv(dtype, seed=14)
    qr, kr = randn(B, N, SQ, 4, seed=15).to(dtype), randn(B, N, SKV, 4, seed=16).to(dtype)
    out, _ = torch_npu.npu_fused_infer_attention_score(
        *[on_npu(t) for t in (q, k, v)],
        query_rope=on_npu(qr),
        key_rope=on_npu(kr),
        num_heads=N,
        scale=SCALE,
        input_layout="BNSD",
    )
    want = reference(torch.cat([q, qr], -1).float(), torch.cat([k, kr], -1).float(), v.float())[0]
    assert_close(out, want, dtype, "rope")


def test_quantisation_refused_and_no_backward():
    q, k, v = [on_npu(t) for t in qkv(torch.float16)]
    scale = on_npu(torch.ones(1))
    with pytest.raises(NotImplementedError, match="quant_scale2"):
        torch_npu.npu_prompt_flash_attention(
            q, k, v, quant_scale2=scale, num_heads=N, input_layout="BNSD"
        )
    with pytest.raises(NotImplementedError, match="antiquant_scale"):
        torch_npu.npu_incre_flash_attention(
            q[:, :, :1], k, v, antiquant_scale=scale, num_heads=N, input_layout="BNSD"
        )
    with pytest.raises(NotImplementedError, match="query_padding_size"):
        torch_npu.npu_fused_infer_attention_score(
            q, k, v, query_padding_size=scale, num_heads=N, input_layout="BNSD"
        )
    with pytest.raises(RuntimeError, match="needs the compressed atten_mask"):
        torch_npu.npu_prompt_flash_attention(
            q, k, v, num_heads=N, input_layout="BNSD", sparse_mode=2
        )
    with pytest.raises(TypeError):
        torch_npu.npu_prompt_flash_attention(q, k, v, None)
    check_no_derivative(
        "npu_prompt_flash_attention",
        q.detach().clone().requires_grad_(),
        lambda leaf: torch_npu.npu_prompt_flash_attention(
            leaf, k, v, num_heads=N, input_layout="BNSD"
        ).float(),
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_v2_names_and_learnable_sink(dtype):
    q, k, v = qkv(dtype, seed=17)
    sink = torch.tensor([0.0, 1.0, -1.0, 2.0])
    mask = causal(SQ, SKV, SKV - SQ)
    out, lse = torch_npu.npu_fused_infer_attention_score_v2(
        *[on_npu(bnsd_to(t, "BSH")) for t in (q, k, v)],
        atten_mask=on_npu(mask),
        learnable_sink=on_npu(sink),
        num_query_heads=N,
        softmax_scale=SCALE,
        sparse_mode=1,
        actual_seq_kvlen=[SKV, 6],
        return_softmax_lse=True,
    )
    # the sink: one more logit per head in each row's softmax, attending to no value
    scores = q.float() @ k.float().transpose(-1, -2) * SCALE
    scores = scores.masked_fill(mask, float("-inf"))
    scores[1, :, :, 6:] = float("-inf")
    column = sink.reshape(1, N, 1, 1).expand(B, N, SQ, 1)
    probs = torch.softmax(torch.cat([scores, column], -1), -1)[..., :-1]
    assert_close(out, bnsd_to(probs @ v.float(), "BSH"), dtype, "learnable sink")
    want_lse = torch.logsumexp(torch.cat([scores, column], -1), -1)
    torch.testing.assert_close(lse.cpu(), want_lse.unsqueeze(-1), rtol=1e-5, atol=1e-5)
    with pytest.raises(NotImplementedError, match="quant_scale_out"):
        torch_npu.npu_fused_infer_attention_score_v2(
            on_npu(q),
            on_npu(k),
            on_npu(v),
            quant_scale_out=on_npu(torch.ones(1)),
            num_query_heads=N,
            input_layout="BNSD",
        )


def test_fused_paged_bnsd_blocks_and_tnd_lse():
    q, k, v = qkv(torch.float32, sq=1, kv_heads=2, seed=18)
    block, kv_lens = 4, [5, 7]
    table = torch.tensor([[2, 0], [1, 3]], dtype=torch.int32)
    pools = []
    for t in (k, v):  # (blocks, N, block_size, D), as the BNSD form of the paged cache
        pool = torch.zeros(4, 2, block, D)
        padded = torch.cat([t, t.new_zeros(B, 2, 2 * block - SKV, D)], 2)
        for b in range(B):
            for j in range(2):
                pool[int(table[b, j])] = padded[b, :, j * block : (j + 1) * block]
        pools.append(pool)
    out, _ = torch_npu.npu_fused_infer_attention_score(
        on_npu(q),
        on_npu(pools[0]),
        on_npu(pools[1]),
        block_table=on_npu(table),
        block_size=block,
        actual_seq_lengths_kv=kv_lens,
        num_heads=N,
        num_key_value_heads=2,
        scale=SCALE,
        input_layout="BNSD",
    )
    want = reference(q, k, v, kv_lens=kv_lens)[0]
    assert_close(out, want, torch.float32, "paged BNSD")
    # TND: the lse is (T, N, 1)
    ends = [2, 5]
    tq, tk, tv = (randn(5, N, D, seed=19 + i) for i in range(3))
    out, lse = torch_npu.npu_fused_infer_attention_score(
        on_npu(tq),
        on_npu(tk),
        on_npu(tv),
        actual_seq_lengths=ends,
        actual_seq_lengths_kv=ends,
        num_heads=N,
        scale=SCALE,
        input_layout="TND",
        softmax_lse_flag=True,
    )
    assert out.shape == (5, N, D) and lse.shape == (5, N, 1)
    for s, e in ((0, 2), (2, 5)):
        part = [t[s:e].transpose(0, 1).unsqueeze(0) for t in (tq, tk, tv)]
        want, want_lse = reference(*part)
        assert_close(out[s:e], want[0].transpose(0, 1), torch.float32, "TND")
        torch.testing.assert_close(lse.cpu()[s:e, :, 0], want_lse[0].transpose(0, 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_shared_prefix(dtype):
    q, k, v = qkv(dtype, seed=22)
    pk, pv = randn(1, N, 4, D, seed=23).to(dtype), randn(1, N, 4, D, seed=24).to(dtype)
    kv_lens, prefix_len = [SKV, 5], 3
    mask = torch.rand(B, 1, SQ, prefix_len + SKV, generator=torch.Generator().manual_seed(25))
    mask = mask < 0.3
    out, _ = torch_npu.npu_fused_infer_attention_score(
        *[on_npu(bnsd_to(t, "BSH")) for t in (q, k, v)],
        key_shared_prefix=on_npu(bnsd_to(pk, "BSH")),
        value_shared_prefix=on_npu(bnsd_to(pv, "BSH")),
        actual_shared_prefix_len=[prefix_len],
        atten_mask=on_npu(mask),
        sparse_mode=1,
        actual_seq_lengths_kv=kv_lens,
        num_heads=N,
        scale=SCALE,
    )
    # each batch attends to the prefix's first 3 positions, then its own keys
    kk = [torch.cat([pk[0, :, :prefix_len], k[b, :, : kv_lens[b]]], 1) for b in range(B)]
    vv = [torch.cat([pv[0, :, :prefix_len], v[b, :, : kv_lens[b]]], 1) for b in range(B)]
    want = torch.stack(
        [
            reference(
                q[b : b + 1].float(),
                kk[b].unsqueeze(0).float(),
                vv[b].unsqueeze(0).float(),
                mask[b : b + 1],
            )[0][0]
            for b in range(B)
        ]
    )
    assert_close(out, bnsd_to(want, "BSH"), dtype, "shared prefix")
