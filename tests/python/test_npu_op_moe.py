"""torch_npu's MoE operators against their documented formulas written in plain torch (loops
over rows where the documentation states it so): npu_moe_gating_top_k_softmax (and _v2),
npu_moe_init_routing (and _v2), npu_moe_finalize_routing, npu_moe_compute_expert_tokens,
npu_moe_token_permute / npu_moe_token_unpermute (with their gradients) and npu_grouped_matmul
(ungrouped lists, M-axis groups from a list or a tensor of cumulative ends or sizes, split
outputs). Values in fp32 and fp16 (tolerances: overlay_support.npu_op_checks), integer
outputs exactly with their int32/int64 dtypes; quantisation parameters raise naming themselves;
the inference kernels refuse a backward as torch_npu defines none."""

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

ROWS, E, K, H = 6, 4, 2, 5


def experts(seed, rows=ROWS, k=K, e=E):
    """Distinct experts per row, as top-k gives them."""
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(e, generator=g)[:k] for _ in range(rows)]).int()


@pytest.mark.parametrize("dtype", DTYPES)
def test_gating_top_k_softmax(dtype):
    x = randn(ROWS, E, seed=1, scale=2).to(dtype)
    finished = torch.tensor([False, True, False, False, False, True])
    y, idx, row_idx = torch_npu.npu_moe_gating_top_k_softmax(on_npu(x), on_npu(finished), k=K)
    probs = torch.softmax(x.float(), -1)
    for i in range(ROWS):
        ranked = sorted(range(E), key=lambda e: (-probs[i, e].item(), e))[:K]
        want_idx = [E] * K if finished[i] else ranked
        assert idx[i].cpu().tolist() == want_idx, i
        assert_close(y[i], probs[i, ranked], dtype, f"row {i}")
        assert row_idx[i].cpu().tolist() == [j * ROWS + i for j in range(K)]
    assert idx.dtype == torch.int32 and row_idx.dtype == torch.int32
    # 3-D input: rows are all but the last axis
    y3, idx3, row3 = torch_npu.npu_moe_gating_top_k_softmax(on_npu(x.reshape(2, 3, E)), k=K)
    assert torch.equal(
        y3.cpu().reshape(ROWS, K), torch_npu.npu_moe_gating_top_k_softmax(on_npu(x), k=K)[0].cpu()
    )
    assert row3.shape == (2, 3, K) and int(row3.cpu()[1, 2, 1]) == ROWS + 5


@pytest.mark.parametrize("dtype", DTYPES)
def test_gating_top_k_softmax_v2_renorm(dtype):
    x = randn(ROWS, E, seed=2, scale=2).to(dtype)
    y, idx, soft = torch_npu.npu_moe_gating_top_k_softmax_v2(on_npu(x), k=K, renorm=1)
    top = x.float().topk(K, -1)
    assert torch.equal(idx.cpu().long(), top.indices)
    assert_close(y, torch.softmax(top.values, -1), dtype, "renorm 1")
    assert soft.numel() == 0
    y0, _, soft0 = torch_npu.npu_moe_gating_top_k_softmax_v2(on_npu(x), k=K, output_softmax=True)
    assert soft0.dtype == torch.float32
    torch.testing.assert_close(soft0.cpu(), torch.softmax(x.float(), -1))
    assert_close(y0, torch.softmax(x.float(), -1).topk(K, -1).values, dtype, "renorm 0")


@pytest.mark.parametrize("dtype", DTYPES)
def test_init_routing(dtype):
    x = randn(ROWS, H, seed=3).to(dtype)
    expert_idx = experts(4)
    row_idx = (torch.arange(K).reshape(-1, 1) * ROWS + torch.arange(ROWS)).t().int()
    active = 4
    ex, er, ee = torch_npu.npu_moe_init_routing(
        on_npu(x), on_npu(row_idx), on_npu(expert_idx), active
    )
    pairs = sorted(
        (int(expert_idx[i, j]), int(row_idx[i, j])) for i in range(ROWS) for j in range(K)
    )
    sorted_rows = [r for _, r in pairs]
    assert ee.cpu().tolist() == [e for e, _ in pairs] and ee.dtype == torch.int32
    want_er = [0] * (ROWS * K)
    for i, r in enumerate(sorted_rows):
        want_er[r] = i
    assert er.cpu().tolist() == want_er and er.dtype == torch.int32
    assert ex.shape == (active * K, H) and ex.dtype == dtype
    assert torch.equal(ex.cpu(), x[[r % ROWS for r in sorted_rows[: active * K]]])


@pytest.mark.parametrize("row_idx_type", [0, 1])
@pytest.mark.parametrize("tokens_type", [0, 1, 2])
def test_init_routing_v2(row_idx_type, tokens_type):
    x = randn(ROWS, H, seed=5)
    expert_idx = experts(6)
    scale = randn(ROWS, seed=7)
    start, end, active = 1, 3, 5
    ex, er, tokens, es = torch_npu.npu_moe_init_routing_v2(
        on_npu(x),
        on_npu(expert_idx),
        scale=on_npu(scale),
        active_num=active,
        expert_num=E,
        expert_tokens_num_type=tokens_type,
        expert_tokens_num_flag=True,
        active_expert_range=[start, end],
        row_idx_type=row_idx_type,
    )
    flat = expert_idx.reshape(-1).tolist()
    order = sorted((j for j, e in enumerate(flat) if start <= e < end), key=lambda j: flat[j])
    kept = order[:active]
    assert ex.shape == (ROWS * K, H)
    assert torch.equal(ex.cpu()[: len(kept)], x[[j // K for j in kept]])
    assert not bool(ex.cpu()[len(kept) :].any())
    if row_idx_type == 0:
        want = [-1] * (ROWS * K)
        for p, j in enumerate(kept):
            want[j] = p
    else:
        want = kept + [-1] * (ROWS * K - len(kept))
    assert er.cpu().tolist() == want and er.dtype == torch.int32
    counts = [flat.count(e) for e in range(start, end)]
    if tokens_type == 0:
        assert tokens.cpu().tolist() == [sum(counts[: i + 1]) for i in range(len(counts))]
    elif tokens_type == 1:
        assert tokens.cpu().tolist() == counts
    else:
        pairs = [[start + i, c] for i, c in enumerate(counts) if c]
        assert tokens.cpu().tolist() == pairs + [[0, 0]] * (E - len(pairs))
    assert tokens.dtype == torch.int64
    assert torch.equal(es.cpu()[: len(kept)], scale[[j // K for j in kept]])
    with pytest.raises(NotImplementedError, match="quant_mode=1"):
        torch_npu.npu_moe_init_routing_v2(on_npu(x), on_npu(expert_idx), expert_num=E, quant_mode=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_finalize_routing(dtype):
    expanded = randn(ROWS * K, H, seed=8).to(dtype)
    skip1, skip2 = randn(ROWS, H, seed=9).to(dtype), randn(ROWS, H, seed=10).to(dtype)
    bias = randn(E, H, seed=11).to(dtype)
    scales = torch.rand(ROWS, K, generator=torch.Generator().manual_seed(12)).to(dtype)
    src_to_dst = torch.randperm(ROWS * K, generator=torch.Generator().manual_seed(13)).int()
    expert_idx = experts(14)
    out = torch_npu.npu_moe_finalize_routing(
        *[on_npu(t) for t in (expanded, skip1, skip2, bias, scales, src_to_dst, expert_idx)], 0, K
    )
    want = torch.zeros(ROWS, H)
    for i in range(ROWS):
        want[i] = skip1[i].float() + skip2[i].float()
        for j in range(K):
            row = expanded[int(src_to_dst[i + j * ROWS])].float()
            want[i] += scales[i, j].float() * (row + bias[int(expert_idx[i, j])].float())
    assert_close(out, want, dtype, "finalize")
    plain = torch_npu.npu_moe_finalize_routing(
        on_npu(expanded), None, None, None, None, on_npu(src_to_dst), None, k=K
    )
    want_plain = torch.stack(
        [
            sum(expanded[int(src_to_dst[i + j * ROWS])].float() for j in range(K))
            for i in range(ROWS)
        ]
    )
    assert_close(plain, want_plain, dtype, "without scales")


def test_compute_expert_tokens():
    sorted_experts = torch.tensor([0, 0, 2, 2, 2, 3, 5], dtype=torch.int32)
    out = torch_npu.npu_moe_compute_expert_tokens(on_npu(sorted_experts), 7)
    assert out.cpu().tolist() == [2, 2, 5, 6, 6, 7, 7] and out.dtype == torch.int32
    with pytest.raises(RuntimeError, match="not sorted"):
        torch_npu.npu_moe_compute_expert_tokens(on_npu(sorted_experts.flip(0)), 7)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("num_out", [None, 8, -3])
def test_token_permute_and_unpermute(dtype, num_out):
    tokens = randn(ROWS, H, seed=15).to(dtype)
    indices = experts(16)
    probs = torch.rand(ROWS, K, generator=torch.Generator().manual_seed(17)).to(dtype)
    leaf = on_npu(tokens, grad=True)
    permuted, sorted_idx = torch_npu.npu_moe_token_permute(
        leaf, on_npu(indices), num_out_tokens=num_out
    )
    flat = indices.reshape(-1).tolist()
    order = sorted(range(ROWS * K), key=lambda j: (flat[j], j))  # row p copies order[p]
    kept = {None: ROWS * K, 8: 8, -3: ROWS * K - 3}[num_out]
    # CANN's formula: sorted_indices = argsort(argsort(flat)), where each assignment went
    where = [order.index(i) for i in range(ROWS * K)]
    assert sorted_idx.cpu().tolist() == where and sorted_idx.dtype == torch.int32
    assert torch.equal(permuted.detach().cpu(), tokens[[j // K for j in order[:kept]]])
    grad = randn(kept, H, seed=18).to(dtype)
    permuted.backward(on_npu(grad))
    want_grad = torch.zeros(ROWS, H)
    for p in range(kept):
        want_grad[order[p] // K] += grad[p].float()
    assert_close(leaf.grad, want_grad, dtype, "permute gradient")

    rows = on_npu(permuted.detach(), grad=True)
    p_leaf = on_npu(probs, grad=True)
    out = torch_npu.npu_moe_token_unpermute(rows, sorted_idx, p_leaf)
    ref_rows = permuted.detach().cpu().float().requires_grad_()
    ref_probs = probs.float().requires_grad_()
    # token t, slot j takes row sorted_indices[t * K + j] (rows cut by num_out_tokens: zero)
    placed = [ref_rows[where[i]] if where[i] < kept else torch.zeros(H) for i in range(ROWS * K)]
    want = torch.stack(
        [sum(ref_probs[t, j] * placed[t * K + j] for j in range(K)) for t in range(ROWS)]
    )
    assert_close(out, want, dtype, "unpermute")
    grad_out = randn(ROWS, H, seed=19).to(dtype)
    out.backward(on_npu(grad_out))
    want.backward(grad_out.float())
    assert_close(rows.grad, ref_rows.grad, dtype, "unpermute gradient of the rows")
    assert_close(p_leaf.grad, ref_probs.grad, dtype, "unpermute gradient of probs")


@pytest.mark.parametrize("dtype", DTYPES)
def test_grouped_matmul(dtype):
    xs = [randn(3, 4, seed=20).to(dtype), randn(2, 5, 6, seed=21).to(dtype)]
    ws = [randn(4, 3, seed=22).to(dtype), randn(6, 2, seed=23).to(dtype)]
    bs = [randn(3, seed=24).to(dtype), randn(2, seed=25).to(dtype)]
    got = torch_npu.npu_grouped_matmul(
        [on_npu(t) for t in xs], [on_npu(t) for t in ws], bias=[on_npu(t) for t in bs]
    )
    assert isinstance(got, list) and len(got) == 2
    for i in range(2):
        assert_close(got[i], xs[i].float() @ ws[i].float() + bs[i].float(), dtype, f"pair {i}")
    # M-axis groups: rows [0, 2), [2, 2), [2, 5) of x, one (3, K, N) weight; row 5 past the end
    x = randn(6, 4, seed=26).to(dtype)
    w = randn(3, 4, 2, seed=27).to(dtype)
    want = [
        x[0:2].float() @ w[0].float(),
        x[2:2].float() @ w[1].float(),
        x[2:5].float() @ w[2].float(),
    ]
    for group_list, list_type in (
        ([2, 2, 5], 0),
        (torch.tensor([2, 2, 5]), 0),
        (torch.tensor([2, 0, 3]), 1),
    ):
        if isinstance(group_list, torch.Tensor):
            group_list = on_npu(group_list)
        split = torch_npu.npu_grouped_matmul(
            [on_npu(x)],
            [on_npu(w)],
            group_list=group_list,
            group_type=0,
            group_list_type=list_type,
            split_item=0,
        )
        assert [tuple(t.shape) for t in split] == [(2, 2), (0, 2), (3, 2)]
        for g in range(3):
            assert_close(split[g], want[g], dtype, f"group {g}")
        joined = torch_npu.npu_grouped_matmul(
            [on_npu(x)],
            [on_npu(w)],
            group_list=group_list,
            group_type=0,
            group_list_type=list_type,
            split_item=3,
        )
        assert len(joined) == 1
        assert_close(joined[0], torch.cat(want + [torch.zeros(1, 2)]), dtype, "joined")
    f32 = torch_npu.npu_grouped_matmul([on_npu(xs[0])], [on_npu(ws[0])], output_dtype=torch.float32)
    assert f32[0].dtype == torch.float32


def test_grouped_matmul_refusals_and_no_backward():
    x, w = on_npu(randn(3, 4, seed=28), grad=True), on_npu(randn(4, 2, seed=29))
    with pytest.raises(NotImplementedError, match="antiquant_scale"):
        torch_npu.npu_grouped_matmul([x], [w], antiquant_scale=[on_npu(torch.ones(2))])
    with pytest.raises(NotImplementedError, match="group_type=1"):
        torch_npu.npu_grouped_matmul([x], [w], group_list=[3], group_type=1)
    check_no_derivative(
        "npu_grouped_matmul", x, lambda t: torch_npu.npu_grouped_matmul([t], [w])[0]
    )
    check_no_derivative(
        "npu_moe_gating_top_k_softmax",
        on_npu(randn(ROWS, E, seed=30), grad=True),
        lambda gate: torch_npu.npu_moe_gating_top_k_softmax(gate, k=K)[0],
    )


def grouped_top_k(x, k, bias, k_group, group_count, mode, norm_type, scaling, eps):
    """DeepSeek-V3 routing in plain torch, row by row: (y, experts, norm)."""
    norm = torch.softmax(x, -1) if norm_type == 0 else torch.sigmoid(x)
    ys, experts = [], []
    per = x.shape[1] // group_count
    for r in range(x.shape[0]):
        score = (norm[r] + bias).tolist() if bias is not None else norm[r].tolist()
        groups = []
        for g in range(group_count):
            part = sorted(score[g * per : (g + 1) * per], reverse=True)
            groups.append(part[0] if mode == 0 else part[0] + part[1])
        kept = sorted(range(group_count), key=lambda g: (-groups[g], g))[:k_group]
        candidates = [e for g in kept for e in range(g * per, (g + 1) * per)]
        chosen = sorted(candidates, key=lambda e: (-score[e], e))[:k]
        w = norm[r, chosen]
        ys.append(w / (w.sum() + eps) * scaling)
        experts.append(chosen)
    return torch.stack(ys), torch.tensor(experts), norm


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_type, mode", [(1, 1), (1, 0), (0, 0)])
def test_gating_top_k_groups(dtype, norm_type, mode):
    x = randn(5, 16, seed=31, scale=2).to(dtype)
    bias = randn(16, seed=32, scale=0.3).to(dtype)
    y, idx, norm = torch_npu.npu_moe_gating_top_k(
        on_npu(x),
        3,
        bias=on_npu(bias),
        k_group=2,
        group_count=4,
        group_select_mode=mode,
        norm_type=norm_type,
        routed_scaling_factor=2.5,
        eps=1e-20,
        out_flag=True,
    )
    want_y, want_idx, want_norm = grouped_top_k(
        x.float(), 3, bias.float(), 2, 4, mode, norm_type, 2.5, 1e-20
    )
    assert idx.dtype == torch.int32 and torch.equal(idx.cpu().long(), want_idx)
    assert_close(y, want_y, dtype, "y")
    assert norm.dtype == torch.float32
    torch.testing.assert_close(norm.cpu(), want_norm)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gating_top_k_backward(dtype):
    x = randn(4, 8, seed=33, scale=2).to(dtype)
    leaf = on_npu(x, grad=True)
    y, idx, norm = torch_npu.npu_moe_gating_top_k(
        leaf, 3, norm_type=1, group_count=2, k_group=2, routed_scaling_factor=1.5
    )
    grad = randn(4, 3, seed=34).to(dtype)
    y.backward(on_npu(grad))
    ref = x.float().requires_grad_()
    want_y, want_idx, _ = grouped_top_k(ref, 3, None, 2, 2, 0, 1, 1.5, 1e-20)
    assert torch.equal(idx.cpu().long(), want_idx)
    want_y.backward(grad.float())
    assert_close(leaf.grad, ref.grad, dtype, "gradient of x")
    explicit = torch_npu.npu_moe_gating_top_k_backward(
        norm, on_npu(grad), idx, norm_type=1, routed_scaling_factor=1.5
    )
    assert_close(explicit, ref.grad, dtype, "npu_moe_gating_top_k_backward")
    with pytest.raises(NotImplementedError, match="sigmoid"):
        torch_npu.npu_moe_gating_top_k_backward(norm, on_npu(grad), idx, norm_type=0)
    with pytest.raises(NotImplementedError, match="tid2eid"):
        torch_npu.npu_moe_gating_top_k(leaf, 3, tid2eid=on_npu(torch.zeros(4, 3).int()))


def routing(tokens, experts, top_k, seed):
    g = torch.Generator().manual_seed(seed)
    chosen = torch.zeros(tokens, experts, dtype=torch.bool)
    for t in range(tokens):
        chosen[t, torch.randperm(experts, generator=g)[:top_k]] = True
    return chosen


def test_permute_with_routing_map_documented_example():
    tokens = torch.tensor([[0.1] * 4, [0.2] * 4, [0.3] * 4], dtype=torch.float16)
    probs = torch.tensor([[0.5, 0.3], [0.4, 0.6], [0.2, 0.8]], dtype=torch.float16)
    permuted, permuted_probs, idx = torch_npu.npu_moe_token_permute_with_routing_map(
        on_npu(tokens),
        on_npu(torch.ones(3, 2, dtype=torch.int8)),
        probs=on_npu(probs),
        num_out_tokens=6,
    )
    assert idx.cpu().tolist() == [0, 3, 1, 4, 2, 5] and idx.dtype == torch.int32
    assert torch.equal(permuted.cpu(), tokens[[0, 1, 2, 0, 1, 2]])
    assert permuted_probs.cpu().tolist() == probs.t().reshape(-1).tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_permute_and_unpermute_with_routing_map(dtype):
    count, experts, top_k = 5, 4, 2
    chosen = routing(count, experts, top_k, 40)
    tokens = randn(count, H, seed=41).to(dtype)
    probs = (torch.rand(count, experts, generator=torch.Generator().manual_seed(42)) * chosen).to(
        dtype
    )
    t_leaf, p_leaf = on_npu(tokens, grad=True), on_npu(probs, grad=True)
    permuted, permuted_probs, idx = torch_npu.npu_moe_token_permute_with_routing_map(
        t_leaf, on_npu(chosen), probs=p_leaf, num_out_tokens=count * top_k
    )
    pairs = [(e, t) for e in range(experts) for t in range(count) if chosen[t, e]]
    assert torch.equal(permuted.detach().cpu(), tokens[[t for _, t in pairs]])
    assert torch.equal(permuted_probs.detach().cpu(), torch.stack([probs[t, e] for e, t in pairs]))
    for i in range(count * top_k):  # the documented property of sorted_indices
        assert pairs[int(idx[i])][1] == i // top_k
    # gradients: each copy's gradient back to its token, each prob's to its (token, expert)
    g_rows, g_probs = randn(count * top_k, H, seed=43).to(dtype), randn(count * top_k, seed=44)
    torch.autograd.backward([permuted, permuted_probs], [on_npu(g_rows), on_npu(g_probs.to(dtype))])
    want_t, want_p = torch.zeros(count, H), torch.zeros(count, experts)
    for p, (e, t) in enumerate(pairs):
        want_t[t] += g_rows[p].float()
        want_p[t, e] += g_probs.to(dtype)[p].float()
    assert_close(t_leaf.grad, want_t, dtype, "tokens gradient")
    assert_close(p_leaf.grad, want_p, dtype, "probs gradient")

    rows_leaf = on_npu(permuted.detach(), grad=True)
    out = torch_npu.npu_moe_token_unpermute_with_routing_map(
        rows_leaf, idx, [count, H], probs=on_npu(probs), routing_map=on_npu(chosen)
    )
    want = torch.zeros(count, H)
    for p, (e, t) in enumerate(pairs):
        want[t] += permuted.detach().cpu()[p].float() * probs[t, e].float()
    assert_close(out, want, dtype, "unpermute")
    out.backward(on_npu(torch.ones(count, H, dtype=dtype)))
    want_g = torch.stack([probs[t, e].float().expand(H) for e, t in pairs])
    assert_close(rows_leaf.grad, want_g, dtype, "unpermute gradient")
    plain = torch_npu.npu_moe_token_unpermute_with_routing_map(permuted.detach(), idx, [count, H])
    assert_close(plain, tokens.float() * top_k, dtype, "unpermute without probs")


def test_permute_with_routing_map_drop_and_pad():
    count, experts, capacity = 6, 3, 2
    chosen = routing(count, experts, 2, 45)
    chosen[:, 0] = True  # expert 0 over capacity: its first two tokens stay
    tokens = randn(count, H, seed=46)
    probs = torch.rand(count, experts, generator=torch.Generator().manual_seed(47))
    permuted, permuted_probs, idx = torch_npu.npu_moe_token_permute_with_routing_map(
        on_npu(tokens),
        on_npu(chosen),
        probs=on_npu(probs),
        num_out_tokens=experts * capacity,
        drop_and_pad=True,
    )
    slots = []
    for e in range(experts):
        routed = [t for t in range(count) if chosen[t, e]]
        rest = [t for t in range(count) if not chosen[t, e]]
        slots += [(e, t) for t in (routed + rest)[:capacity]]
    assert idx.cpu().tolist() == [t for _, t in slots]
    assert torch.equal(permuted.cpu(), tokens[[t for _, t in slots]])
    assert torch.equal(permuted_probs.cpu(), torch.stack([probs[t, e] for e, t in slots]))
    out = torch_npu.npu_moe_token_unpermute_with_routing_map(
        permuted, idx, [count, H], probs=on_npu(probs), drop_and_pad=True
    )
    want = torch.zeros(count, H)
    for i, (e, t) in enumerate(slots):
        want[t] += tokens[t] * probs[t, e]
    assert_close(out, want, torch.float32, "unpermute drop_and_pad")


def test_grouped_matmul_list_overload_and_per_group_inputs():
    # one x cut by an int list without group_type (the .List overload), several weights
    x = randn(5, 4, seed=35)
    ws = [randn(4, 3, seed=36), randn(4, 3, seed=37)]
    outs = torch_npu.npu_grouped_matmul(
        [on_npu(x)], [on_npu(w) for w in ws], group_list=[2, 5], split_item=1
    )
    assert len(outs) == 2
    assert_close(outs[0], x[:2] @ ws[0], torch.float32, "group 0")
    assert_close(outs[1], x[2:] @ ws[1], torch.float32, "group 1")
    # several x, one per weight, joined (group_type 0 without group_list)
    xs = [x[:2], x[2:]]
    joined = torch_npu.npu_grouped_matmul(
        [on_npu(t) for t in xs], [on_npu(w) for w in ws], group_type=0, split_item=2
    )
    assert_close(joined[0], torch.cat([xs[0] @ ws[0], xs[1] @ ws[1]]), torch.float32, "joined")


@pytest.mark.parametrize("dtype", DTYPES)
def test_moe_layer_chain_matches_plain_experts(dtype):
    """Ascend's MoE inference chain (gating -> init routing -> expert token counts -> grouped
    matmul -> finalize routing) agrees with each token's top-k experts weighted by their
    probabilities: the operators' index conventions fit together."""
    rows, experts, k, hidden, out_dim = 7, 4, 2, 6, 5
    x = randn(rows, hidden, seed=50).to(dtype)
    logits = randn(rows, experts, seed=51, scale=2).to(dtype)
    w = randn(experts, hidden, out_dim, seed=52).to(dtype)
    y, expert_idx, row_idx = torch_npu.npu_moe_gating_top_k_softmax(on_npu(logits), k=k)
    expanded_x, expanded_row_idx, expanded_experts = torch_npu.npu_moe_init_routing(
        on_npu(x), row_idx, expert_idx, rows
    )
    ends = torch_npu.npu_moe_compute_expert_tokens(expanded_experts, experts)
    expert_rows = torch_npu.npu_grouped_matmul(
        [expanded_x], [on_npu(w)], group_list=ends.long(), group_type=0, split_item=2
    )[0]
    out = torch_npu.npu_moe_finalize_routing(
        expert_rows, None, None, None, y, expanded_row_idx, expert_idx, k=k
    )
    probs = torch.softmax(logits.float(), -1)
    want = torch.zeros(rows, out_dim)
    for i in range(rows):
        top = probs[i].topk(k)
        for p, e in zip(top.values, top.indices):
            # y and the expert rows are stored in dtype before the combine, as on the NPU
            row = (x[i].float() @ w[e].float()).to(dtype).float()
            want[i] += p.to(dtype).float() * row
    assert_close(out, want, dtype, "MoE layer")


def test_token_unpermute_inverts_permute_and_init_routing_v2():
    """Both index producers feed npu_moe_token_unpermute: its sorted_indices say where each
    (token, slot) went, as npu_moe_token_permute's and init_routing_v2's gather index do."""
    tokens = randn(ROWS, H, seed=60)
    indices = experts(61)
    probs = torch.rand(ROWS, K, generator=torch.Generator().manual_seed(62))
    want = tokens * probs.sum(1, keepdim=True)
    permuted, sorted_idx = torch_npu.npu_moe_token_permute(on_npu(tokens), on_npu(indices))
    back = torch_npu.npu_moe_token_unpermute(permuted, sorted_idx, on_npu(probs))
    assert_close(back, want, torch.float32, "permute then unpermute")
    expanded, row_idx, _, _ = torch_npu.npu_moe_init_routing_v2(
        on_npu(tokens), on_npu(indices), expert_num=E, expert_tokens_num_type=1, row_idx_type=0
    )
    back = torch_npu.npu_moe_token_unpermute(expanded, row_idx, on_npu(probs))
    assert_close(back, want, torch.float32, "init_routing_v2 then unpermute")
