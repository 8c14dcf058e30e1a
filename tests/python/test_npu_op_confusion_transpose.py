"""torch_npu.npu_confusion_transpose against permute + reshape in plain torch (exact: no
arithmetic)."""

import pytest
import torch

from overlay_support.npu_op_checks import DTYPES, check_against_formula, on_npu, randn, torch_npu


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_first(dtype):
    check_against_formula(
        lambda x: torch_npu.npu_confusion_transpose(x, (0, 2, 1, 3), (2, 4, 18), True),
        lambda x: x.permute(0, 2, 1, 3).reshape(2, 4, 18),
        [randn(2, 3, 4, 6)],
        dtype,
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_first(dtype):
    # BERT's transpose_for_scores: (B*S, H) -> (B, S, N, D) -> (B, N, S, D)
    check_against_formula(
        lambda x: torch_npu.npu_confusion_transpose(x, (0, 2, 1, 3), (2, 5, 4, 3), False),
        lambda x: x.reshape(2, 5, 4, 3).permute(0, 2, 1, 3),
        [randn(10, 12)],
        dtype,
    )


def test_documented_shapes_and_contiguous_result():
    x = on_npu(randn(2, 3, 4, 6))
    y = torch_npu.npu_confusion_transpose(x, (0, 2, 1, 3), (2, 4, 18), True)
    y2 = torch_npu.npu_confusion_transpose(x, (0, 2, 1), (2, 12, 6), False)
    assert y.shape == (2, 4, 18) and y2.shape == (2, 6, 12)
    assert y2.is_contiguous() and y2.device.type == "npu"
    assert y2.data_ptr() != x.data_ptr()


def test_tensor_method_and_torch_namespace():
    x = on_npu(randn(4, 6))
    want = x.cpu().reshape(2, 2, 6).permute(0, 2, 1)
    assert torch.equal(x.npu_confusion_transpose((0, 2, 1), (2, 2, 6), False).cpu(), want)
    assert torch.equal(torch.npu_confusion_transpose(x, (0, 2, 1), (2, 2, 6), False).cpu(), want)
