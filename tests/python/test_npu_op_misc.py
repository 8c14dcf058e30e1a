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
    assert torch.equal(leaf.grad.cpu(), torch.zeros(5).index_add_(
        0, index.flatten(), torch.ones(6))[:, None].expand(5, 3))
    with pytest.raises(RuntimeError, match=r"lie in \[0, 5\)"):
        torch_npu.npu_gather_sparse_index(leaf, on_npu(torch.tensor([5])))


@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm_silu(dtype):
    x, w, b = randn(2, 6, 5, seed=4, scale=3).to(dtype), randn(6, seed=5).to(dtype), \
        randn(6, seed=6).to(dtype)
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
    unpacked = torch_npu.npu_sign_bits_unpack(on_npu(torch.tensor([159, 15],
                                                                  dtype=torch.uint8)), 2,
                                              torch.float32)
    assert unpacked.cpu().tolist() == [[1, 1, 1, 1, 1, -1, -1, 1], [1, 1, 1, 1, -1, -1, -1, -1]]
    x = randn(40, seed=7)
    back = torch_npu.npu_sign_bits_unpack(torch_npu.npu_sign_bits_pack(on_npu(x), 1).view(-1),
                                          1, 1)
    assert back.dtype == torch.float16
    torch.testing.assert_close(back.cpu().float().view(-1), torch.where(x >= 0, 1.0, -1.0),
                               **FP32)
