"""clamp with number bounds on an integer NPU tensor, as torch_npu's kernel does it: the bounds
are taken in the tensor's dtype (a float bound truncated toward zero), so the result keeps the
integer dtype, in place or not. Ascend's YOLOv4 clamps int64 grid indices with ``gain - 1``, a
float; CPU torch refuses that in place and promotes to float out of place. Host tensors keep CPU
torch's rules. References: the same clamp with the bounds written as the integers they become."""

import math

import pytest
import torch

from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401

BOUNDS = [(0, 5.0), (-1.5, 2.9), (0.0, None), (None, 3.7), (-2.99, -0.5)]


def truncated(bound):
    return None if bound is None else math.trunc(bound)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.uint8])
@pytest.mark.parametrize("lo,hi", BOUNDS)
def test_integer_clamp_keeps_its_dtype(dtype, lo, hi):
    if dtype == torch.uint8 and (lo or 0) < 0:
        pytest.skip("uint8 holds no negative bound")
    host = torch.arange(0 if dtype == torch.uint8 else -4, 8).to(dtype)
    want = host.clamp(truncated(lo), truncated(hi))
    x = host.npu()
    out = x.clamp(lo, hi)
    assert out.dtype == dtype and out.is_npu and torch.equal(out.cpu(), want)
    assert torch.equal(torch.clamp(x, min=lo, max=hi).cpu(), want)
    inplace = x.clone()
    assert inplace.clamp_(lo, hi) is inplace and torch.equal(inplace.cpu(), want)
    if hi is None:
        assert torch.equal(x.clamp_min(lo).cpu(), want)
        assert torch.equal(x.clone().clamp_min_(lo).cpu(), want)
    if lo is None:
        assert torch.equal(x.clamp_max(hi).cpu(), want)
        assert torch.equal(x.clone().clamp_max_(hi).cpu(), want)


def test_yolo_grid_indices():
    """The pattern of Ascend's YOLOv4 loss: int64 cell indices clamped to the grid, whose size
    is a float."""
    gain = torch.tensor([13.0]).npu()
    gij = torch.tensor([[-1, 3], [12, 13], [5, 20]]).npu()
    gij[:, 0].clamp_(0, gain[0].item() - 1)
    gij[:, 1].clamp_(0, gain[0].item() - 1)
    assert gij.dtype == torch.int64
    assert gij.cpu().tolist() == [[0, 3], [12, 12], [5, 12]]


def test_floats_and_host_tensors_keep_torchs_rules():
    x = torch.tensor([-1.0, 0.25, 3.5]).npu()
    assert torch.equal(x.clamp(0, 2.5).cpu(), torch.tensor([0.0, 0.25, 2.5]))
    host = torch.arange(4)
    assert host.clamp(0, 2.5).dtype == torch.float32  # CPU torch promotes
    with pytest.raises(RuntimeError, match="can't be cast"):
        host.clone().clamp_(0, 2.5)


@pytest.mark.parametrize("bound", [float("inf"), float("nan"), 1e30])
def test_a_bound_the_dtype_cannot_hold_is_named(bound):
    x = torch.arange(4).npu()
    with pytest.raises(RuntimeError, match=r"bound .* cannot be converted to torch\.int64"):
        x.clamp(0, bound)
