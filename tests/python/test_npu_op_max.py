"""torch_npu.npu_max against torch.max: the same values, int32 indices, the gradient on the
maxima."""

import pytest
import torch

from overlay_support.npu_op_checks import DTYPES, on_npu, randn, torch_npu


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim, keepdim", [(0, False), (1, True), (-1, False)])
def test_npu_max_is_torch_max_with_int32_indices(dtype, dim, keepdim):
    x = randn(4, 5, 3, scale=10).to(dtype)
    t = on_npu(x, grad=True)
    values, indices = torch_npu.npu_max(t, dim, keepdim)
    want_values, want_indices = torch.max(x.float(), dim, keepdim)
    assert indices.dtype == torch.int32 and values.dtype == dtype
    assert values.device.type == "npu" and indices.device.type == "npu"
    assert torch.equal(values.detach().cpu().float(), want_values.to(dtype).float())
    assert torch.equal(indices.cpu().long(), want_indices)
    values.sum().backward()
    want_grad = torch.zeros_like(x.float()).scatter_(
        dim, want_indices if keepdim else want_indices.unsqueeze(dim), 1.0
    )
    assert torch.equal(t.grad.cpu().float(), want_grad)
