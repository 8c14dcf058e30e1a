"""Sparse fp32 and fp16 results on an emulated 910 in saturation mode: the sparse gradient of
``nn.Embedding(sparse=True)`` (Huawei's test/nn/test_embedding.py makes them) is checked for
overflow through its values, which saturate to the format's largest value and raise the float
status as a strided result's do; in-range values are torch's own. And ``max()`` of a sparse NPU
tensor, which the NPU computes and CPU torch has no kernel for."""

import pytest
import torch
import torch.nn as nn

from overlay_support.npu_op_checks import emulated_chip, float_status, on_npu

FLT_MAX = torch.finfo(torch.float32).max


def _sparse_grad(scale: float) -> torch.Tensor:
    embedding = nn.Embedding(10, 3, sparse=True)
    with torch.no_grad():
        embedding.weight.copy_(torch.arange(30.0).reshape(10, 3))
    embedding = embedding.npu()
    out = embedding(on_npu(torch.tensor([7, 1, 7])))
    out.backward(on_npu(torch.full((3, 3), scale)))
    return embedding.weight.grad


def test_a_sparse_gradient_in_range_is_torch_s():
    with emulated_chip("Ascend910A", inf_nan=False):
        float_status.clear()
        grad = _sparse_grad(2.0)
        assert grad.layout == torch.sparse_coo and grad.device.type == "npu"
        assert not float_status.get()
        dense = grad.to_dense().cpu()  # a sparse NPU tensor does not move to the host yet
    want = torch.zeros(10, 3)
    want[7] = 4.0  # two lookups of row 7
    want[1] = 2.0
    assert torch.equal(dense, want)


def test_an_overflowing_sparse_gradient_saturates_and_raises_the_status():
    with emulated_chip("Ascend910A", inf_nan=False):
        float_status.clear()
        grad = _sparse_grad(FLT_MAX).coalesce()  # row 7 sums two FLT_MAX: an overflow
        assert float_status.get()
        values = grad.to_dense().cpu()
        float_status.clear()
    assert values[7].eq(FLT_MAX).all() and values[1].eq(FLT_MAX).all()
    assert torch.isfinite(values).all()


def test_an_fp16_sparse_gradient_saturates_to_65504():
    """fp16 results are computed in fp32 and stored once: a sparse one through its values."""
    with emulated_chip("Ascend910A", inf_nan=False):
        float_status.clear()
        embedding = nn.Embedding(10, 3, sparse=True).half().npu()
        out = embedding(on_npu(torch.tensor([7, 1, 7])))
        out.backward(on_npu(torch.full((3, 3), 40000.0), torch.float16))
        grad = embedding.weight.grad.coalesce()  # row 7: 80000, beyond fp16's 65504
        assert grad.dtype == torch.float16 and grad.layout == torch.sparse_coo
        assert float_status.get()
        values = grad.to_dense().cpu().float()
        float_status.clear()
    assert values[7].eq(65504.0).all() and values[1].eq(40000.0).all()


def _coo(indices, values, size):
    return torch.sparse_coo_tensor(on_npu(torch.tensor(indices)), on_npu(values), size)


def test_max_of_a_sparse_npu_tensor_counts_its_unstored_zeros():
    stored = torch.tensor([1.0, 2.0, 4.0])
    diagonal = [[0, 1, 2], [0, 1, 2]]
    top = _coo(diagonal, stored, [4, 4]).max()
    assert top.layout == torch.strided and top.dim() == 0 and top.device.type == "npu"
    assert top.item() == 4.0
    assert _coo(diagonal, -stored, [4, 4]).max().item() == 0.0  # the zeros off the diagonal
    every = [[0, 0, 1, 1], [0, 1, 0, 1]]
    assert _coo(every, torch.tensor([-1.0, -3.0, -2.0, -5.0]), [2, 2]).max().item() == -1.0
    # duplicates add up before the maximum is taken, as to_dense() adds them
    assert _coo([[0, 0], [0, 0]], torch.tensor([-1.0, -3.0]), [1, 1]).max().item() == -4.0
    assert _coo([[0], [0]], torch.tensor([3]), [2, 2]).max().dtype == torch.int64


@pytest.mark.parametrize("path", ["general", "fast"])
def test_an_fp16_sparse_tensor_written_in_place_on_a_910b(path):
    """Huawei's test_sparse_coo.py writes fp16 sparse NPU tensors in place (``x.abs_()``)."""
    from torch_npu._fp16 import path as emulation_path

    indices = torch.tensor([[0, 1, 1], [2, 0, 2]])
    values = torch.tensor([-0.3, 0.4, -1.7], dtype=torch.float16)
    with emulated_chip("Ascend910B1", inf_nan=True), emulation_path.using(path):
        for name in ("abs_", "neg_", "sqrt_"):
            host = torch.sparse_coo_tensor(indices, values, (2, 3)).coalesce()
            npu = host.npu()
            getattr(npu, name)()
            getattr(host, name)()
            got = npu._values().cpu()
            assert npu.layout == torch.sparse_coo and got.dtype == torch.float16
            assert torch.equal(got.view(torch.int16), host._values().view(torch.int16)), name
