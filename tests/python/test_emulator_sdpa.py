"""``torch.nn.functional.scaled_dot_product_attention`` on NPU tensors runs as one fused kernel
(torch_npu's flash attention): computed in fp32, the output stored once in the inputs' dtype,
no float status from masking, gradients computed in fp32 and stored once in the inputs' dtype.

Each case is checked against ``softmax(q @ k^T * scale + mask) @ v`` written here in fp32 on
host copies of the same (rounded) inputs, then rounded to the tested dtype. Tolerances:
- fp32: rtol 1e-5, atol 1e-5 (a different summation order);
- fp16: rtol 2e-3, atol 2e-3 (one rounding of a value a few fp32 ulp away may land on the
  neighbouring fp16 value, 2^-10 apart; a per-op fp16 decomposition drifts further);
- bf16 (a 910B): rtol 8e-3, atol 8e-3 (the neighbouring bf16 value, 2^-7 apart at 1..2).

torch 1.13 has no public SDPA: the file is skipped there."""

import math

import pytest
import torch
import torch.nn.functional as F

from overlay_support.npu_op_checks import float_status, on_npu, randn

pytestmark = pytest.mark.skipif(
    not hasattr(F, "scaled_dot_product_attention"),
    reason="torch 1.13 has no scaled_dot_product_attention",
)
GQA = "enable_gqa" in (
    getattr(getattr(F, "scaled_dot_product_attention", None), "__doc__", None) or ""
)  # torch 2.5+

TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=8e-3, atol=8e-3),
}
B, HQ, HKV, L, S, E = 2, 4, 2, 6, 8, 16


def reference(q, k, v, mask=None, causal=False, scale=None, keep=None, p=0.0):
    """The formula in fp32 on (..., H, L, E) host tensors; a bool mask is True where attended;
    rows with nothing attended give zeros; key/value heads serve consecutive query groups."""
    groups = q.shape[-3] // k.shape[-3]
    k = k.repeat_interleave(groups, dim=-3)
    v = v.repeat_interleave(groups, dim=-3)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-1, -2) * scale
    allowed = None
    if causal:
        allowed = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    elif mask is not None and mask.dtype == torch.bool:
        allowed = mask
    elif mask is not None:
        scores = scores + mask
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    probs = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # rows of no key: 0
    if keep is not None:
        probs = probs * keep / (1 - p)
    return probs @ v


def inputs(dtype, hkv=HKV, seed=0, shape=(B,)):
    q = randn(*shape, HQ, L, E, seed=seed).to(dtype)
    k = randn(*shape, hkv, S, E, seed=seed + 1).to(dtype)
    v = randn(*shape, hkv, S, E, seed=seed + 2).to(dtype)
    return q, k, v


def check(got, want, dtype, what):
    assert got.dtype == dtype, f"{what}: {got.dtype}"
    assert got.device.type == "npu", f"{what}: on {got.device}"
    torch.testing.assert_close(
        got.detach().cpu().float(),
        want.detach().to(dtype).float(),
        msg=lambda m: f"{what}: {m}",
        **TOL[dtype],
    )


def run_both(dtype, mask=None, grads=True, hkv=HKV, shape=(B,), mask_grad=False, **kwargs):
    """SDPA on the NPU against the reference, forward and (``grads``) backward."""
    q, k, v = inputs(dtype, hkv, shape=shape)
    npu_in = [on_npu(t, grad=grads) for t in (q, k, v)]
    ref_in = [t.float().requires_grad_(grads) for t in (q, k, v)]
    npu_mask = ref_mask = None
    if mask is not None:
        npu_mask = on_npu(mask, grad=mask_grad)
        ref_mask = mask.float().requires_grad_(mask_grad) if mask.is_floating_point() else mask
    extra = dict(enable_gqa=True) if GQA and hkv != HQ else {}
    got = F.scaled_dot_product_attention(*npu_in, attn_mask=npu_mask, **kwargs, **extra)
    want = reference(
        *ref_in, mask=ref_mask, causal=kwargs.get("is_causal", False), scale=kwargs.get("scale")
    )
    check(got, want, dtype, "output")
    if grads:
        grad_out = randn(*want.shape, seed=9).to(dtype)
        got.backward(on_npu(grad_out))
        want.backward(grad_out.float())
        names = ("query", "key", "value") + (("attn_mask",) if mask_grad else ())
        pairs = list(zip(npu_in, ref_in)) + ([(npu_mask, ref_mask)] if mask_grad else [])
        for name, (a, b) in zip(names, pairs):
            check(a.grad, b.grad, a.dtype, f"gradient of {name}")
    return got


def bool_mask(seed=3):
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(B, 1, L, S, generator=g) > 0.4
    mask[0, 0, 1] = False  # one query attends to nothing: zeros
    return mask


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_plain_causal_and_scale(chip910, dtype):
    run_both(dtype)
    run_both(dtype, is_causal=True)
    run_both(dtype, scale=0.3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_bool_and_float_masks(chip910, dtype):
    run_both(dtype, mask=bool_mask())
    run_both(dtype, mask=torch.ones(L, S, dtype=torch.bool).tril(diagonal=2))  # (L, S)
    additive = randn(1, HQ, L, S, seed=4).to(dtype)
    run_both(dtype, mask=additive, mask_grad=True)


def test_bf16_on_a_910b(chip910b):
    run_both(torch.bfloat16, mask=bool_mask())
    run_both(torch.bfloat16, is_causal=True)


def test_bf16_refused_on_a_910(chip910):
    q, k, v = (on_npu(t) for t in inputs(torch.bfloat16))
    with pytest.raises(RuntimeError, match="bfloat16 is not supported"):
        F.scaled_dot_product_attention(q, k, v)


def test_grouped_query_heads_and_3d_inputs(chip910):
    run_both(torch.float16, hkv=1)  # every query head on one key/value head
    run_both(torch.float16, hkv=HQ, shape=(), is_causal=True)  # (H, L, E)


def test_one_rounding_no_status_after_a_masked_fp16_sdpa_on_a_910(chip910):
    """torch's own decomposition turns the bool mask into an fp16 -inf, which a 910 stores as
    -65504 and reports; the fused kernel masks in fp32 and reports nothing, in forward and in
    backward."""
    for kwargs in (dict(attn_mask=on_npu(bool_mask())), dict(is_causal=True)):
        q, k, v = (on_npu(t, grad=True) for t in inputs(torch.float16))
        float_status.clear()
        out = F.scaled_dot_product_attention(
            q, k, v, **kwargs, **(dict(enable_gqa=True) if GQA else {})
        )
        out.float().pow(2).sum().backward()
        assert not float_status.get(), kwargs
        assert q.grad.dtype == k.grad.dtype == torch.float16
    # fp32 inside: values near the fp16 maximum are averaged without overflowing on the way
    q, k, v = (on_npu(t) for t in inputs(torch.float16, hkv=HQ))
    big = on_npu(torch.full((B, HQ, S, E), 60000.0, dtype=torch.float16))
    float_status.clear()
    out = F.scaled_dot_product_attention(q, k, big, attn_mask=on_npu(bool_mask()))
    assert not float_status.get()
    assert set(out.cpu().float().unique().tolist()) <= {0.0, 60000.0}


def test_float_mask_of_minus_inf_on_a_910(chip910):
    """An fp32 float mask holding -inf (torch's causal mask, made by hand) brings its inf in: no
    overflow, forward and backward, and a row of only -inf gives zeros. (In fp16 a 910 in
    saturation mode holds no -inf: the emulator stores it as -65504.)"""
    causal = torch.zeros(L, S).masked_fill(
        torch.ones(L, S, dtype=torch.bool).triu(1), float("-inf")
    )
    causal[2] = float("-inf")  # a query attending to nothing
    q, k, v = inputs(torch.float32, hkv=HQ)
    npu_in = [on_npu(t, grad=True) for t in (q, k, v)]
    mask = on_npu(causal)
    float_status.clear()
    got = F.scaled_dot_product_attention(*npu_in, attn_mask=mask)
    got.sum().backward()
    assert not float_status.get()
    check(got, reference(q, k, v, mask=causal), torch.float32, "output")
    assert not got[:, :, 2].detach().cpu().any()
    assert all(bool(t.grad.isfinite().all()) for t in npu_in)


def test_dropout_from_the_npu_generator(chip910):
    """Uniform scores (q = 0) against identity values show the kept entries: each is 0 or
    1/(S (1 - p)); the same NPU seed gives the same mask, the host's generator is untouched,
    and random inputs with that mask follow the formula."""
    p = 0.4
    q = on_npu(torch.zeros(B, HQ, L, E))
    ones = on_npu(torch.eye(S).expand(B, HQ, S, S).contiguous())
    host_state = torch.get_rng_state()
    torch.npu.manual_seed(7)
    first = F.scaled_dot_product_attention(
        q, on_npu(torch.zeros(B, HQ, S, E)), ones, dropout_p=p
    ).cpu()
    assert torch.equal(torch.get_rng_state(), host_state)
    torch.npu.manual_seed(7)
    again = F.scaled_dot_product_attention(
        q, on_npu(torch.zeros(B, HQ, S, E)), ones, dropout_p=p
    ).cpu()
    assert torch.equal(first, again)
    keep = (first != 0).float()
    torch.testing.assert_close(first, keep / (S * (1 - p)))
    assert 0.4 < keep.mean().item() < 0.8  # about 1 - p kept, of 768
    q, k, v = inputs(torch.float32, hkv=HQ)
    torch.npu.manual_seed(7)
    got = F.scaled_dot_product_attention(on_npu(q), on_npu(k), on_npu(v), dropout_p=p)
    check(got, reference(q, k, v, keep=keep, p=p), torch.float32, "dropout")


def test_npu_autocast_casts_the_inputs_first(chip910):
    q, k, v = (on_npu(t) for t in inputs(torch.float32, hkv=HQ))
    with torch.autocast("npu", dtype=torch.float16):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.dtype == torch.float16
    want = reference(*(t.half().float() for t in inputs(torch.float32, hkv=HQ)), causal=True)
    check(out, want, torch.float16, "autocast")


def test_host_tensors_keep_torchs_sdpa():
    q, k, v = inputs(torch.float32, hkv=HQ)
    original = F.scaled_dot_product_attention.__wrapped__
    assert torch.equal(
        F.scaled_dot_product_attention(q, k, v, is_causal=True), original(q, k, v, is_causal=True)
    )


def test_bad_input_is_named(chip910):
    q, k, v = (on_npu(t) for t in inputs(torch.float32))
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=on_npu(bool_mask()), is_causal=True)
    with pytest.raises(RuntimeError, match="not a multiple"):
        F.scaled_dot_product_attention(
            q, k[:, :1].expand(B, 3, S, E).contiguous(), v[:, :1].expand(B, 3, S, E).contiguous()
        )
    with pytest.raises(RuntimeError, match="same dtype"):
        F.scaled_dot_product_attention(q, k.half(), v)
    with pytest.raises(RuntimeError, match="attn_mask is on cpu, query on npu:0"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask())
    with pytest.raises(RuntimeError, match="does not broadcast"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=on_npu(torch.ones(3, S) > 0))
