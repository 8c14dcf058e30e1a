"""torch_npu.npu_fusion_attention_v2 and npu_fusion_attention_v3 against attention written in
plain torch from their documented formulas: v2's ``pse_type`` 1 (``scale * (q k^T + pse)``)
and 0 (``scale * q k^T + pse``), its per-head ``sink`` (an extra softmax logit that attends to
nothing; forward and gradient), ``query_rope``/``key_rope`` (``scale * (q k^T + q_r k_r^T)``),
keyword-only arguments, the parameters it refuses; v3's tensor sequence lengths and 6-tuple
(seed and offset as one-element int64 tensors). fp32 and fp16 (tolerances:
overlay_support.npu_op_checks)."""

import math

import pytest
import torch

from overlay_support.npu_op_checks import DTYPES, assert_close, on_npu, randn, torch_npu

B, N, S, D = 2, 2, 5, 8
SCALE = 1 / math.sqrt(D)


def reference(q, k, v, scale=SCALE, pse=None, pse_first=True, sink=None, mask=None):
    """(B, N, S, D) fp32 tensors."""
    scores = q @ k.transpose(-1, -2)
    if pse is not None and pse_first:
        scores = scores + pse
    scores = scores * scale
    if pse is not None and not pse_first:
        scores = scores + pse
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    if sink is not None:
        m = torch.maximum(scores.amax(-1, keepdim=True), sink.reshape(1, -1, 1, 1))
        e = torch.exp(scores - m)
        probs = e / (e.sum(-1, keepdim=True) + torch.exp(sink.reshape(1, -1, 1, 1) - m))
    else:
        probs = torch.softmax(scores, -1)
    return probs @ v


def tensors(dtype, d=D, seed=1):
    return [randn(B, N, S, d, seed=seed + i).to(dtype) for i in range(3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pse_type", [0, 1])
def test_pse_type_orders_add_and_scale(dtype, pse_type):
    q, k, v = tensors(dtype)
    pse = randn(1, N, S, S, seed=9, scale=3).to(dtype)
    out = torch_npu.npu_fusion_attention_v2(
        on_npu(q), on_npu(k), on_npu(v), N, "BNSD", pse=on_npu(pse), scale=SCALE, pse_type=pse_type
    )
    assert len(out) == 7 and out[4:] == (0, 0, 0)
    want = reference(q.float(), k.float(), v.float(), pse=pse.float(), pse_first=pse_type == 1)
    assert_close(out[0], want, dtype, f"pse_type {pse_type}")
    other = reference(q.float(), k.float(), v.float(), pse=pse.float(), pse_first=pse_type != 1)
    assert not torch.allclose(out[0].cpu().float(), other, atol=1e-2)  # the order matters


@pytest.mark.parametrize("dtype", DTYPES)
def test_sink_joins_the_softmax_and_gets_a_gradient(dtype):
    q, k, v = tensors(dtype, seed=3)
    sink = torch.tensor([0.5, 3.0])
    npu_in = [on_npu(t, grad=True) for t in (q, k, v)]
    npu_sink = on_npu(sink, grad=True)
    mask = torch.ones(S, S, dtype=torch.bool).triu(1)
    out = torch_npu.npu_fusion_attention_v2(
        *npu_in, N, "BNSD", atten_mask=on_npu(mask), sink=npu_sink, scale=SCALE
    )[0]
    ref_in = [t.float().requires_grad_() for t in (q, k, v)]
    ref_sink = sink.clone().requires_grad_()
    want = reference(*ref_in, sink=ref_sink, mask=mask)
    assert_close(out, want, dtype, "with sink")
    grad = randn(B, N, S, D, seed=8).to(dtype)
    out.backward(on_npu(grad))
    want.backward(grad.float())
    for name, got, ref in zip("qkv", npu_in, ref_in):
        assert_close(got.grad, ref.grad, dtype, f"gradient of {name}")
    assert_close(npu_sink.grad, ref_sink.grad, torch.float32, "gradient of sink")
    # v1 takes sink as well
    v1 = torch_npu.npu_fusion_attention(
        *[on_npu(t) for t in (q, k, v)],
        N,
        "BNSD",
        atten_mask=on_npu(mask),
        sink=on_npu(sink),
        scale=SCALE,
    )
    assert torch.equal(v1[0].cpu(), out.detach().cpu())


@pytest.mark.parametrize("dtype", DTYPES)
def test_rope_parts_add_their_product(dtype):
    q, k, v = tensors(dtype, seed=5)
    qr, kr = [randn(B, N, S, 4, seed=20 + i).to(dtype) for i in range(2)]
    # TND: the batches one after another
    tnd = [t.permute(0, 2, 1, 3).reshape(B * S, N, -1) for t in (q, k, v, qr, kr)]
    ends = [S * (i + 1) for i in range(B)]
    npu_in = [on_npu(t, grad=i in (0, 1, 3, 4)) for i, t in enumerate(tnd)]
    mask = torch.ones(S, S, dtype=torch.bool).triu(1)
    out = torch_npu.npu_fusion_attention_v2(
        npu_in[0],
        npu_in[1],
        npu_in[2],
        N,
        "TND",
        query_rope=npu_in[3],
        key_rope=npu_in[4],
        atten_mask=on_npu(mask),
        actual_seq_qlen=ends,
        actual_seq_kvlen=ends,
        sparse_mode=0,
        scale=SCALE,
    )[0]
    ref_in = [t.float().requires_grad_() for t in (q, k, v, qr, kr)]
    want = reference(
        torch.cat([ref_in[0], ref_in[3]], -1),
        torch.cat([ref_in[1], ref_in[4]], -1),
        ref_in[2],
        mask=mask,
    )
    want_tnd = want.permute(0, 2, 1, 3).reshape(B * S, N, D)
    assert_close(out, want_tnd, dtype, "rope TND")
    grad = randn(B * S, N, D, seed=30).to(dtype)
    out.backward(on_npu(grad))
    want_tnd.backward(grad.float())
    assert_close(
        npu_in[3].grad,
        ref_in[3].grad.permute(0, 2, 1, 3).reshape(B * S, N, 4),
        dtype,
        "gradient of query_rope",
    )


def test_v2_arguments_after_the_layout_are_keywords_and_refusals_name_them():
    q, k, v = [on_npu(t) for t in tensors(torch.float32)]
    with pytest.raises(TypeError):
        torch_npu.npu_fusion_attention_v2(q, k, v, N, "BNSD", None)
    with pytest.raises(NotImplementedError, match="pse_type=2"):
        torch_npu.npu_fusion_attention_v2(q, k, v, N, "BNSD", pse=on_npu(torch.ones(N)), pse_type=2)
    with pytest.raises(NotImplementedError, match="q_start_idx"):
        torch_npu.npu_fusion_attention_v2(q, k, v, N, "BNSD", q_start_idx=[0])
    with pytest.raises(RuntimeError, match="sink must have shape"):
        torch_npu.npu_fusion_attention_v2(q, k, v, N, "BNSD", sink=on_npu(torch.ones(3)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_v3_is_v1_with_tensor_lengths(dtype):
    q, k, v = [t.permute(0, 2, 1, 3).reshape(B * S, N, D) for t in tensors(dtype, seed=7)]
    ends = torch.tensor([2, B * S], dtype=torch.int64)
    npu_in = [on_npu(t, grad=True) for t in (q, k, v)]
    got = torch_npu.npu_fusion_attention_v3(
        *npu_in, N, "TND", scale=SCALE, keep_prob=1.0, actual_seq_qlen=ends, actual_seq_kvlen=ends
    )
    assert len(got) == 6
    for t in got[4:]:
        assert t.dtype == torch.int64 and t.shape == (1,) and t.device.type == "cpu"
    v1 = torch_npu.npu_fusion_attention(
        *[on_npu(t) for t in (q, k, v)],
        N,
        "TND",
        scale=SCALE,
        actual_seq_qlen=[2, B * S],
        actual_seq_kvlen=[2, B * S],
    )
    for a, b in zip(got[:3], v1[:3]):
        assert torch.equal(a.detach().cpu(), b.cpu())
    # the two batches: rows [0, 2) and [2, 10), each attending to its own keys
    parts = []
    for s, e in ((0, 2), (2, B * S)):
        parts.append(
            reference(*[t[s:e].float().transpose(0, 1).unsqueeze(0) for t in (q, k, v)])[
                0
            ].transpose(0, 1)
        )
    assert_close(got[0], torch.cat(parts), dtype, "v3 TND")
    got[0].sum().backward()
    assert npu_in[0].grad is not None and npu_in[0].grad.dtype == dtype
