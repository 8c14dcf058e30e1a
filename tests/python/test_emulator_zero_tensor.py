"""Autograd's zeros (``torch._efficientzerotensor``: a ZeroTensor, with no memory) copied into
NPU tensors on an emulated 910 in saturation mode, where every fp32 and fp16 result is read for
overflow (Huawei's test/custom_ops/test_npu_copy_zero_tensor.py): the copy gives zeros and
raises no float status, as on the NPU."""

import pytest
import torch

from overlay_support.npu_op_checks import emulated_chip, float_status


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
@pytest.mark.parametrize("inf_nan", [False, True])
def test_copying_a_zero_tensor_into_an_npu_tensor(dtype, inf_nan):
    with emulated_chip("Ascend910A", inf_nan=inf_nan):
        float_status.clear()
        target = torch.ones(3, 4, dtype=dtype).npu()
        target.copy_(torch._efficientzerotensor((3, 4), dtype=dtype))
        assert not float_status.get()
        assert torch.equal(target.cpu(), torch.zeros(3, 4, dtype=dtype))
