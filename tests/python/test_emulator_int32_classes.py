"""Class indices as int32 on the emulated NPU, which torch_npu's kernels take where CPU torch
wants int64 (Huawei's test/nn tests call them so): ``F.one_hot`` (int32 in, int32 out, as
aclnnOneHot gives it) and ``MultiLabelMarginLoss``'s targets. Each NPU result is compared with
torch's own on the host with int64 classes; host tensors keep torch's refusal. Also: a lazy
module's uninitialized parameter converted by ``module.half()`` on the fast path."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401


def test_one_hot_of_int32_classes_on_the_npu_is_int32():
    classes = torch.tensor([0, 2, 1, 2, 0])
    want = F.one_hot(classes)
    got = F.one_hot(classes.to(torch.int32).npu())
    assert got.dtype == torch.int32 and got.device.type == "npu"
    assert torch.equal(got.cpu(), want.to(torch.int32))
    wide = F.one_hot(classes.to(torch.int32).npu(), num_classes=4)
    assert torch.equal(wide.cpu(), F.one_hot(classes, 4).to(torch.int32))
    assert F.one_hot(classes.npu()).dtype == torch.int64  # int64 stays torch's


def test_one_hot_keeps_torch_s_checks_and_host_rule():
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(torch.tensor([0, 3], dtype=torch.int32).npu(), num_classes=2)
    with pytest.raises(RuntimeError, match="index tensor"):
        F.one_hot(torch.tensor([0, 1], dtype=torch.int32))  # a host tensor: torch's rule


def test_multilabel_margin_loss_takes_int32_targets_on_the_npu():
    torch.manual_seed(0)
    x = torch.randn(3, 4)
    target = torch.tensor([[3, 0, -1, 1], [1, -1, 0, 0], [0, 1, 2, 3]])
    want_x = x.clone().requires_grad_(True)
    want = nn.MultiLabelMarginLoss()(want_x, target)
    want.backward()
    got_x = x.npu().requires_grad_(True)
    got = nn.MultiLabelMarginLoss()(got_x, target.to(torch.int32).npu())
    got.backward()
    torch.testing.assert_close(got.cpu(), want.detach(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got_x.grad.cpu(), want_x.grad, rtol=1e-6, atol=1e-6)


def test_half_of_an_uninitialized_lazy_parameter():
    class Lazy(nn.modules.lazy.LazyModuleMixin, nn.Module):
        pass

    module = Lazy()
    module.register_parameter("weight", nn.parameter.UninitializedParameter())
    module.half()
    module.weight.materialize(10)
    assert module.weight.dtype == torch.float16 and module.weight.shape == (10,)
