"""torch_npu.npu_one_hot against its definition (torch_npu's documented example, TF's OneHot
for classes out of range) and the label-smoothing loss of Ascend's ResNet50 scripts."""

import pytest
import torch

from overlay_support.npu_op_checks import on_npu, torch_npu


def test_npu_one_hot_matches_torch_npu_s_example():
    # torch_npu's documentation: IntTensor([5, 3, 2, 1]), depth 5 -> 5 is out of range.
    got = torch_npu.npu_one_hot(on_npu(torch.tensor([5, 3, 2, 1], dtype=torch.int32)), depth=5)
    want = torch.zeros(4, 5)
    want[1, 3] = want[2, 2] = want[3, 1] = 1
    assert got.dtype == torch.float32 and got.device.type == "npu"
    assert torch.equal(got.cpu(), want)


def test_npu_one_hot_fills_on_and_off_values_over_any_shape():
    classes = torch.tensor([[0, 2, -1], [4, 1, 3]])  # -1 and 4: out of range for depth 4
    got = torch_npu.npu_one_hot(on_npu(classes), -1, 4, 0.9, 0.1 / 3).cpu()
    assert got.shape == (2, 3, 4)
    for index in [(i, j) for i in range(2) for j in range(3)]:
        c = int(classes[index])
        want = torch.full((4,), 0.1 / 3)
        if 0 <= c < 4:
            want[c] = 0.9
        assert torch.equal(got[index], want), (index, got[index])


def test_npu_one_hot_reads_float_classes_as_int32():
    got = torch_npu.npu_one_hot(on_npu(torch.tensor([1.7, -0.5, 2.0])), depth=3).cpu()
    assert torch.equal(got, torch.tensor([[0.0, 1, 0], [1, 0, 0], [0, 0, 1]]))


def test_npu_one_hot_refuses_an_axis_torch_npu_does_not_size():
    with pytest.raises(NotImplementedError, match="num_classes"):
        torch_npu.npu_one_hot(on_npu(torch.tensor([[1, 0]])), 0, 3)


def test_resnet50_label_smoothing_loss_runs_forward_and_backward():
    """ResNet50_for_PyTorch's CrossEntropy(smooth_factor=0.1): one-hot labels with on/off
    values, fp16 logits, npu_softmax_cross_entropy_with_logits, the mean in fp32; the result is
    the smoothed cross entropy."""
    classes, smooth = 10, 0.1
    logits = torch.randn(6, classes, generator=torch.Generator().manual_seed(3))
    target = torch.tensor([0, 3, 9, 1, 1, 5])
    x = on_npu(logits, grad=True)
    one_hot = torch_npu.npu_one_hot(
        on_npu(target), -1, classes, 1 - smooth, smooth / (classes - 1)
    ).to(torch.float16)
    loss = torch_npu.npu_softmax_cross_entropy_with_logits(x.to(torch.float16), one_hot)
    loss = torch.mean(loss, [0], keepdim=False, dtype=torch.float32)
    loss.backward()
    want = torch.nn.functional.cross_entropy(
        logits.half().float(), target, label_smoothing=smooth * classes / (classes - 1)
    )
    torch.testing.assert_close(loss.detach().cpu(), want, rtol=2e-3, atol=2e-3)
    assert x.grad is not None and x.grad.device.type == "npu"
