"""torch_npu's fused matmul operators against their documented formulas in plain fp32 torch:
npu_batch_gather_matmul(_) (multi-LoRA BGMV), npu_grouped_matmul_add(_) (K-split grouped
matmuls accumulated) and npu_ffn (FFN and MoE FFN) (tolerances:
overlay_support.npu_op_checks)."""

import pytest
import torch
import torch.nn.functional as F

from overlay_support.npu_op_checks import DTYPES, FP32, assert_close, on_npu, randn, torch_npu


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("low_rank", [True, False])
def test_batch_gather_matmul(dtype, low_rank):
    batch, h1, h2, r, w, layers = 5, 16, 8, 4, 3, 2
    y = randn(batch, 12, seed=1).to(dtype)
    x = randn(batch, h1, seed=2).to(dtype)
    wa = randn(w, layers, r, h1, seed=3).to(dtype) if low_rank else None
    wb = randn(w, layers, h2, r if low_rank else h1, seed=4).to(dtype)
    indices = torch.tensor([2, -1, 0, 1, 2], dtype=torch.int32)
    got = torch_npu.npu_batch_gather_matmul(
        on_npu(y),
        on_npu(x),
        on_npu(wb),
        on_npu(indices),
        None if wa is None else on_npu(wa),
        layer_idx=1,
        scale=0.5,
        y_offset=3,
        y_slice_size=h2,
    )
    want = y.float().clone()
    for i, a in enumerate(indices.tolist()):
        if a < 0:
            continue
        v = x[i].float()
        if low_rank:
            v = wa[a, 1].float() @ v
        want[i, 3 : 3 + h2] += 0.5 * (wb[a, 1].float() @ v)
    assert_close(got, want, dtype, "y")
    target = on_npu(y)
    assert (
        torch_npu.npu_batch_gather_matmul_(
            target,
            on_npu(x),
            on_npu(wb),
            on_npu(indices),
            None if wa is None else on_npu(wa),
            1,
            0.5,
            3,
            -1,
        )
        is target
    )
    assert torch.equal(target.cpu(), got.cpu())
    with pytest.raises(RuntimeError, match="must fit"):
        torch_npu.npu_batch_gather_matmul(
            on_npu(y),
            on_npu(x),
            on_npu(wb),
            on_npu(indices),
            None if wa is None else on_npu(wa),
            y_offset=6,
        )


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("group_list_type", [0, 1])
def test_grouped_matmul_add(dtype, group_list_type):
    x, w = randn(12, 5, seed=5).to(dtype), randn(12, 4, seed=6).to(dtype)
    sizes = [3, 0, 7, 2]
    group_list = torch.tensor(sizes if group_list_type else [3, 3, 10, 12])
    y = randn(4, 5, 4, seed=7)
    got = torch_npu.npu_grouped_matmul_add(
        on_npu(y), on_npu(x), on_npu(w), on_npu(group_list), group_list_type=group_list_type
    )
    want, start = y.clone(), 0
    for i, n in enumerate(sizes):
        want[i] += x[start : start + n].float().t() @ w[start : start + n].float()
        start += n
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.cpu(), want, **FP32)
    target = on_npu(y)
    torch_npu.npu_grouped_matmul_add_(
        target, on_npu(x), on_npu(w), on_npu(group_list), group_list_type=group_list_type
    )
    assert torch.equal(target.cpu(), got.cpu())
    with pytest.raises(RuntimeError, match="transpose_x=True"):
        torch_npu.npu_grouped_matmul_add(
            on_npu(y), on_npu(x), on_npu(w), on_npu(group_list), transpose_x=False
        )


ACTS = {
    "relu": F.relu,
    "silu": F.silu,
    "fastgelu": lambda h: h * torch.sigmoid(1.702 * h),
    "gelu": lambda h: F.gelu(h, approximate="tanh"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", sorted(ACTS))
def test_ffn(dtype, activation):
    x = randn(2, 3, 8, seed=8).to(dtype)
    w1, w2 = randn(8, 16, seed=9, scale=0.3).to(dtype), randn(16, 8, seed=10, scale=0.3).to(dtype)
    b1, b2 = randn(16, seed=11).to(dtype), randn(8, seed=12).to(dtype)
    got = torch_npu.npu_ffn(
        on_npu(x), on_npu(w1), on_npu(w2), activation, bias1=on_npu(b1), bias2=on_npu(b2)
    )
    act = ACTS[activation]
    want = act(x.float() @ w1.float() + b1.float()) @ w2.float() + b2.float()
    assert_close(got, want, dtype, "ffn")


def test_moe_ffn_routes_rows_to_experts():
    x = randn(6, 8, seed=13)
    w1, w2 = randn(3, 8, 16, seed=14, scale=0.3), randn(3, 16, 8, seed=15, scale=0.3)
    got = torch_npu.npu_ffn(on_npu(x), on_npu(w1), on_npu(w2), "relu", expert_tokens=[2, 0, 4])
    want = torch.cat([F.relu(x[:2] @ w1[0]) @ w2[0], F.relu(x[2:] @ w1[2]) @ w2[2]])
    assert_close(got, want, torch.float32, "moe ffn")
    with pytest.raises(RuntimeError, match="summing"):
        torch_npu.npu_ffn(on_npu(x), on_npu(w1), on_npu(w2), "relu", expert_tokens=[2, 2, 1])
    with pytest.raises(RuntimeError, match="not emulated"):
        torch_npu.npu_ffn(on_npu(x), on_npu(w1[0]), on_npu(w2[0]), "swiglu")
