"""torch_npu.contrib.function's npu_fast_condition_index_put (mmdetection's max-IoU assigner in
Ascend's Cascade Mask R-CNN) and the deprecated contrib npu_iou (Ascend's SSD port matches
boxes with priors through it), on the emulated NPU."""
import warnings

import pytest
import torch

from overlay_support.npu_op_checks import on_npu, torch_npu
from torch_npu.contrib import function as nF
from torch_npu.contrib.function.index_op import npu_fast_condition_index_put


@pytest.mark.parametrize("value", [0, 1, 7, -2.5])
def test_condition_index_put_is_boolean_assignment_without_touching_x(value):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 32, generator=g)
    condition = x < 0.5
    want = x.clone()
    want[condition] = value
    original = on_npu(x)
    got = npu_fast_condition_index_put(original, on_npu(condition), value)
    assert got.device.type == "npu" and got.dtype == torch.float32
    assert torch.equal(got.cpu(), want)
    assert torch.equal(original.cpu(), x)  # a new tensor: x itself is left as it is


def test_condition_index_put_on_assigned_indices_as_the_assigner_uses_it():
    """max_iou_assigner: -1 everywhere, 0 where the best IoU is below the negative threshold,
    then i + 1 for the boxes whose best match is ground truth i."""
    assigned = on_npu(torch.full((6,), -1, dtype=torch.long))
    max_overlaps = on_npu(torch.tensor([0.1, 0.6, 0.35, 0.2, 0.9, 0.45]))
    assigned = npu_fast_condition_index_put(assigned, (max_overlaps >= 0) & (max_overlaps < 0.4),
                                            0)
    assigned = npu_fast_condition_index_put(assigned, on_npu(torch.tensor(
        [False, True, False, False, False, False])), 2)
    assert assigned.dtype == torch.long
    assert assigned.cpu().tolist() == [0, 2, 0, 0, -1, -1]


def test_condition_index_put_broadcasts_promotes_and_refuses_non_bool_conditions():
    x = on_npu(torch.arange(6).reshape(2, 3))
    got = npu_fast_condition_index_put(x, on_npu(torch.tensor([True, False, True])), 0.5)
    assert got.dtype == torch.float32  # a float value on an integer x, as torch_npu's
    assert got.cpu().tolist() == [[0.5, 1, 0.5], [0.5, 4, 0.5]]
    with pytest.raises(TypeError, match=r"condition.dtype in \[torch.bool\], got torch.uint8"):
        npu_fast_condition_index_put(x, on_npu(torch.ones(3, dtype=torch.uint8)), 0)


def _boxes(n, g):
    xy = torch.rand(n, 2, generator=g) * 0.7
    return torch.cat([xy, xy + 0.05 + torch.rand(n, 2, generator=g) * 0.25], 1)


def test_contrib_iou_is_the_operator_on_scaled_boxes_one_row_per_box():
    g = torch.Generator().manual_seed(3)
    objects, priors = _boxes(5, g), _boxes(40, g)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = nF.npu_iou(on_npu(objects), on_npu(priors), is_normalized=True)
    assert any(issubclass(w.category, FutureWarning) and "deprecated" in str(w.message)
               for w in caught)
    assert got.shape == (5, 40) and got.device.type == "npu"
    want = torch_npu.npu_ptiou(on_npu(priors * 100), on_npu(objects * 100))
    assert torch.equal(got.cpu(), want.cpu())
    # Against the overlap written out: each side widened by 0.01 in the areas (the operator's).
    inter = (torch.min(objects[:, None, 2:], priors[None, :, 2:]) -
             torch.max(objects[:, None, :2], priors[None, :, :2])).mul(100).clamp(min=0).prod(2)
    area = lambda b: ((b[:, 2] - b[:, 0]) * 100 + 0.01) * ((b[:, 3] - b[:, 1]) * 100 + 0.01)
    reference = inter / (area(objects)[:, None] + area(priors)[None, :] - inter)
    assert torch.allclose(got.cpu(), reference, rtol=2e-3, atol=2e-3)
    # The SSD port takes each prior's best object from it.
    assert torch.equal(got.cpu().max(0).indices, reference.max(0).indices)


def test_contrib_iou_modes_dtypes_and_refusals():
    g = torch.Generator().manual_seed(4)
    a, b = _boxes(3, g) * 100, _boxes(4, g) * 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        iou = nF.npu_iou(on_npu(a.half()), on_npu(b.half()), mode="iou")
        assert iou.dtype == torch.float32  # both sides taken as fp32
        assert torch.equal(iou.cpu(), torch_npu.npu_iou(on_npu(b), on_npu(a)).cpu())
        assert nF.npu_ptiou is nF.npu_iou
        with pytest.raises(ValueError, match=r"Expected mode in \[iou, ptiou\], got 'giou'"):
            nF.npu_iou(on_npu(a), on_npu(b), mode="giou")


def test_contrib_names_its_functions_and_modules_itself():
    import torch_npu.contrib as contrib

    assert contrib.npu_fast_condition_index_put is npu_fast_condition_index_put
    assert contrib.npu_iou is nF.npu_iou and contrib.ROIAlign is contrib.module.ROIAlign
