"""torch_npu.contrib.function.matmul_transpose (``a @ b^T`` with torch_npu's backward of two
``npu_bmmV2`` products) on the emulated NPU, against the same product and its gradients in
plain torch on the host in fp32."""

import pytest
import torch

from overlay_support.npu_op_checks import FP16, FP32, on_npu, randn
from torch_npu.contrib.function import matmul_transpose
from torch_npu.contrib.function._matmul_transpose import MatmulApply


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_product_and_gradients_match_torch(dtype):
    a = randn(2, 3, 4, 5, seed=1).to(dtype).float()
    b = randn(2, 3, 6, 5, seed=2).to(dtype).float()
    grad = randn(2, 3, 4, 6, seed=3).to(dtype).float()
    want_a, want_b = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
    want = want_a @ want_b.transpose(-2, -1)
    want.backward(grad)
    got_a, got_b = on_npu(a, dtype, grad=True), on_npu(b, dtype, grad=True)
    got = matmul_transpose(got_a, got_b)
    assert got.dtype == dtype and got.device.type == "npu" and got.shape == (2, 3, 4, 6)
    got.backward(on_npu(grad, dtype))
    tol = FP32 if dtype == torch.float32 else FP16
    torch.testing.assert_close(got.detach().cpu().float(), want.detach(), **tol)
    torch.testing.assert_close(got_a.grad.cpu().float(), want_a.grad, **tol)
    torch.testing.assert_close(got_b.grad.cpu().float(), want_b.grad, **tol)
    assert MatmulApply.apply is not None and matmul_transpose == MatmulApply.apply


def test_refuses_batch_shapes_it_cannot_pair():
    with pytest.raises(RuntimeError, match="same batch dimensions"):
        matmul_transpose(on_npu(torch.zeros(2, 4, 5)), on_npu(torch.zeros(3, 6, 5)))
