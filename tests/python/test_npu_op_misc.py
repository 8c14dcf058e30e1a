"""torch_npu's small utility operators against their documentation: one_, copy_memory_,
npu_gather_sparse_index (with its gradient), npu_group_norm_silu (against group norm and SiLU
in plain fp32 torch; tolerances: overlay_support.npu_op_checks) and the 1-bit Adam sign
packing (torch_npu's documented example, bit for bit)."""

import pytest
import torch
import torch.nn.functional as F

from overlay_support.npu_op_checks import DTYPES, FP32, assert_close, on_npu, randn, torch_npu


def test_one_and_copy_memory():
    x = on_npu(randn(3, 4))
    assert torch_npu.one_(x) is x and torch.equal(x.cpu(), torch.ones(3, 4))
    src = randn(3, 4, seed=2)
    assert torch_npu.copy_memory_(x, on_npu(src)) is x and torch.equal(x.cpu(), src)
    with pytest.raises(RuntimeError, match="elements"):
        torch_npu.copy_memory_(x, on_npu(randn(5)))


def test_gather_sparse_index():
    x = randn(5, 3, seed=3)
    index = torch.tensor([[4, 0, 2], [1, 1, 3]])
    leaf = on_npu(x, grad=True)
    out = torch_npu.npu_gather_sparse_index(leaf, on_npu(index.int()))
    assert out.shape == (2, 3, 3) and torch.equal(out.detach().cpu(), x[index])
    out.sum().backward()
    assert torch.equal(
        leaf.grad.cpu(),
        torch.zeros(5).index_add_(0, index.flatten(), torch.ones(6))[:, None].expand(5, 3),
    )
    with pytest.raises(RuntimeError, match=r"lie in \[0, 5\)"):
        torch_npu.npu_gather_sparse_index(leaf, on_npu(torch.tensor([5])))


@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm_silu(dtype):
    x, w, b = (
        randn(2, 6, 5, seed=4, scale=3).to(dtype),
        randn(6, seed=5).to(dtype),
        randn(6, seed=6).to(dtype),
    )
    out, mean, rstd = torch_npu.npu_group_norm_silu(on_npu(x), on_npu(w), on_npu(b), 3, 1e-5)
    ref = F.silu(F.group_norm(x.float(), 3, w.float(), b.float(), 1e-5))
    assert_close(out, ref, dtype, "out")
    grouped = x.float().reshape(2, 3, -1)
    assert_close(mean, grouped.mean(-1), dtype, "mean")
    assert_close(rstd, torch.rsqrt(grouped.var(-1, unbiased=False) + 1e-5), dtype, "rstd")


def test_sign_bits_pack_and_unpack_follow_the_documented_example():
    a = torch.tensor([5, 4, 3, 2, 0, -1, -2, 4, 3, 2, 1, 0, -1, -2], dtype=torch.float32)
    packed = torch_npu.npu_sign_bits_pack(on_npu(a), 2)
    assert packed.dtype == torch.uint8 and packed.cpu().tolist() == [[159], [15]]
    unpacked = torch_npu.npu_sign_bits_unpack(
        on_npu(torch.tensor([159, 15], dtype=torch.uint8)), 2, torch.float32
    )
    assert unpacked.cpu().tolist() == [[1, 1, 1, 1, 1, -1, -1, 1], [1, 1, 1, 1, -1, -1, -1, -1]]
    x = randn(40, seed=7)
    back = torch_npu.npu_sign_bits_unpack(torch_npu.npu_sign_bits_pack(on_npu(x), 1).view(-1), 1, 1)
    assert back.dtype == torch.float16
    torch.testing.assert_close(back.cpu().float().view(-1), torch.where(x >= 0, 1.0, -1.0), **FP32)


def test_batch_norm_reduce():
    x = randn(2, 3, 4, 5, seed=8).half()
    total, squares = torch_npu.batch_norm_reduce(on_npu(x), 1e-5)
    assert total.dtype == squares.dtype == torch.float32 and total.shape == (3,)
    torch.testing.assert_close(total.cpu(), x.float().sum((0, 2, 3)), **FP32)
    torch.testing.assert_close(squares.cpu(), x.float().pow(2).sum((0, 2, 3)), **FP32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm_swish_forward_backward(dtype):
    x = randn(2, 6, 5, seed=9, scale=3).to(dtype)
    w, b = randn(6, seed=10).to(dtype), randn(6, seed=11).to(dtype)
    leaves = [on_npu(t, grad=True) for t in (x, w, b)]
    refs = [t.float().requires_grad_() for t in (x, w, b)]
    out, mean, rstd = torch_npu.npu_group_norm_swish(
        leaves[0], 3, leaves[1], leaves[2], eps=1e-5, swish_scale=0.7
    )
    y = F.group_norm(refs[0], 3, refs[1], refs[2], 1e-5)
    want = y * torch.sigmoid(0.7 * y)
    assert_close(out, want, dtype, "out")
    grouped = x.float().reshape(2, 3, -1)
    assert_close(mean, grouped.mean(-1), dtype, "mean")
    assert_close(rstd, torch.rsqrt(grouped.var(-1, unbiased=False) + 1e-5), dtype, "rstd")
    g = randn(*want.shape, seed=12).to(dtype)
    out.backward(on_npu(g))
    want.backward(g.float())
    for leaf, ref, what in zip(leaves, refs, ("input", "weight", "bias")):
        assert_close(leaf.grad, ref.grad, dtype, f"gradient of {what}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_update(dtype):
    lse = [randn(6, seed=s) for s in (13, 14, 15)]
    outs = [randn(6, 4, seed=s).to(dtype) for s in (16, 17, 18)]
    out, lse_out = torch_npu.npu_attention_update(
        [on_npu(t) for t in lse], [on_npu(t) for t in outs], 1
    )
    total = torch.logsumexp(torch.stack(lse), 0)
    want = sum(o.float() * torch.exp(a - total)[:, None] for a, o in zip(lse, outs))
    assert_close(out, want, dtype, "out")
    torch.testing.assert_close(lse_out.cpu(), total, **FP32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ring_attention_update_merges_two_halves_of_attention(dtype):
    # Attention over keys split in two halves equals the merge of the halves' results.
    s, b, n, d, kv = 3, 2, 2, 4, 6
    q, k, v = randn(b, n, s, d, seed=19), randn(b, n, kv, d, seed=20), randn(b, n, kv, d, seed=21)
    scores = q @ k.transpose(-1, -2)
    parts = []
    for lo, hi in ((0, 2), (2, kv)):
        part = scores[..., lo:hi]
        m = part.max(-1, keepdim=True).values
        e = torch.exp(part - m)
        o = (e / e.sum(-1, keepdim=True)) @ v[..., lo:hi, :]
        sbh = o.permute(2, 0, 1, 3).reshape(s, b, n * d)
        parts += [
            sbh.to(dtype),
            m.expand(b, n, s, 8).contiguous(),
            e.sum(-1, keepdim=True).expand(b, n, s, 8).contiguous(),
        ]
    out, m, total = torch_npu.npu_ring_attention_update(*[on_npu(t) for t in parts])
    full = torch.softmax(scores, -1) @ v
    assert_close(out, full.permute(2, 0, 1, 3).reshape(s, b, n * d), dtype, "attn_out")
    torch.testing.assert_close(m.cpu()[..., 0], scores.max(-1).values, **FP32)
    torch.testing.assert_close(
        total.cpu()[..., 0], torch.exp(scores - scores.max(-1, keepdim=True).values).sum(-1), **FP32
    )


def top_k_top_p_reference(logits, p, k):
    values, order = torch.sort(logits, dim=-1, stable=True)
    kth = values.gather(1, (logits.shape[1] - k.long()).unsqueeze(1))
    values = values.masked_fill(values < kth, float("-inf"))
    cumulative = torch.softmax(values, -1).cumsum(-1)
    drop = cumulative <= (1 - p).unsqueeze(1)
    drop[:, -1] = False
    values = values.masked_fill(drop, float("-inf"))
    return torch.empty_like(values).scatter_(1, order, values)


@pytest.mark.parametrize("dtype", DTYPES)
def test_top_k_top_p(dtype):
    logits = randn(4, 16, seed=22, scale=3).to(dtype)
    p, k = torch.tensor([0.9, 0.5, 0.1, 1.0]), torch.tensor([16, 5, 3, 1], dtype=torch.int32)
    got = torch_npu.npu_top_k_top_p(on_npu(logits), on_npu(p.to(dtype)), on_npu(k))
    want = top_k_top_p_reference(logits.float(), p.to(dtype).float(), k)
    if dtype == torch.float16:
        # A 910 in saturation mode stores fp16 -inf as -65504, as every fp16 result.
        want = want.clamp(min=-65504.0)
    assert got.dtype == dtype and torch.equal(got.cpu().float(), want)
    only_k = torch_npu.npu_top_k_top_p(on_npu(logits), k=on_npu(k))
    assert int(torch.isfinite(only_k.cpu()).sum(1)[2]) >= 3
    with pytest.raises(RuntimeError, match="both be None"):
        torch_npu.npu_top_k_top_p(on_npu(logits))


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_batchmatmul(dtype):
    x, w, b = (
        randn(5, 3, 4, seed=23).to(dtype),
        randn(3, 4, 6, seed=24).to(dtype),
        randn(6, seed=25).to(dtype),
    )
    got = torch_npu.npu_transpose_batchmatmul(
        on_npu(x), on_npu(w), bias=on_npu(b), perm_x1=[1, 0, 2], perm_y=[1, 0, 2]
    )
    want = (torch.bmm(x.float().permute(1, 0, 2), w.float()) + b.float()).permute(1, 0, 2)
    assert_close(got, want, dtype, "y")
    with pytest.raises(RuntimeError, match="not emulated"):
        torch_npu.npu_transpose_batchmatmul(
            on_npu(x), on_npu(w), perm_x1=[1, 0, 2], scale=on_npu(torch.ones(18, dtype=torch.int64))
        )


def test_sim_exponential_draws_from_the_exponential_distribution():
    x = on_npu(torch.zeros(20000))
    g = torch.Generator().manual_seed(3)
    assert torch_npu.npu_sim_exponential_(x, 2.0, generator=g) is x
    values = x.cpu()
    assert bool((values >= 0).all())
    assert abs(values.mean().item() - 0.5) < 0.02 and abs(values.std().item() - 0.5) < 0.03
    again = on_npu(torch.zeros(20000))
    torch_npu.npu_sim_exponential_(again, 2.0, generator=torch.Generator().manual_seed(3))
    assert torch.equal(again.cpu(), values), "the generator fixes the draws"


def test_apply_adam_w_out_is_apply_adam_w_with_positional_state():
    grad = randn(4, 6, seed=26)
    states = [
        [randn(4, 6, seed=27), randn(4, 6, seed=28, scale=0.1), randn(4, 6, seed=29).abs() * 0.1]
        for _ in range(2)
    ]
    a = [on_npu(t) for t in states[0]]
    b = [on_npu(t) for t in states[1]]
    got = torch_npu.npu_apply_adam_w_out(
        0.81, 0.998, 1e-2, 0.01, 0.9, 0.999, 1e-8, on_npu(grad), None, False, False, *a
    )
    torch_npu.npu_apply_adam_w(
        0.81, 0.998, 1e-2, 0.01, 0.9, 0.999, 1e-8, on_npu(grad), None, False, False, out=b
    )
    assert all(x is y for x, y in zip(got, a))
    assert all(torch.equal(x.cpu(), y.cpu()) for x, y in zip(a, b))
    assert not torch.equal(a[0].cpu(), states[0][0])


def test_stride_add_follows_the_documented_example():
    one = on_npu(torch.ones(1, 1, 1, 1, 1))
    got = torch_npu.npu_stride_add(one, one, 0, 0, 1)
    want = torch.zeros(1, 16, 1, 1, 1)
    want[0, 0] = 2.0
    assert torch.equal(got.cpu(), want)
    a, b = randn(2, 3, 2, 2, 16, seed=30), randn(2, 5, 2, 2, 16, seed=31)
    got = torch_npu.npu_stride_add(on_npu(a), on_npu(b), 1, 2, 1)
    want = torch.zeros(2, 16, 2, 2, 16)
    want[:, :2] += a[:, 1:]
    want[:, :3] += b[:, 2:]
    torch.testing.assert_close(got.cpu(), want, **FP32)


def test_prefetch_and_swapped_memory():
    w = on_npu(randn(4, 4, seed=32))
    before = w.cpu().clone()
    assert torch_npu.npu_prefetch(w, None, 1 << 20) is None
    assert torch.equal(w.cpu(), before), "a prefetch changes no value"
    with pytest.raises(RuntimeError, match="max_size"):
        torch_npu.npu_prefetch(w, None, 0)
    swapped = torch_npu.empty_with_swapped_memory(
        [3, 5], dtype=torch.float16, device=torch.device("npu:0")
    )
    assert swapped.device.type == "npu" and swapped.shape == (3, 5)
    assert swapped.dtype == torch.float16
    swapped.zero_()
    assert torch.equal(swapped.cpu(), torch.zeros(3, 5, dtype=torch.float16))
