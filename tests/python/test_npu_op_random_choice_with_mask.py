"""torch_npu.npu_random_choice_with_mask: every True position of x once, in random order, padded
with zero rows under a False mask; the seeds fix the order; op-plugin's checks of the input."""

import pytest
import torch

from overlay_support.npu_op_checks import on_npu, torch_npu


def _rows(indices, mask):
    return [tuple(r) for r, m in zip(indices.cpu().tolist(), mask.cpu().tolist()) if m]


def test_doc_example_and_shapes():
    x = on_npu(torch.tensor([1, 0, 1, 0], dtype=torch.bool))
    indices, mask = torch_npu.npu_random_choice_with_mask(x, 2, 1, 0)
    assert indices.dtype == torch.int32 and indices.shape == (2, 1)
    assert mask.dtype == torch.bool and mask.tolist() == [True, True]
    assert indices.device == mask.device == torch.device("npu:0")
    assert sorted(indices.cpu().flatten().tolist()) == [0, 2]


def test_every_true_position_once_then_padding():
    g = torch.Generator().manual_seed(4)
    x = torch.rand(5, 6, 7, generator=g) > 0.8
    want = sorted(tuple(p) for p in torch.nonzero(x).tolist())
    indices, mask = torch_npu.npu_random_choice_with_mask(on_npu(x), len(want) + 9)
    assert indices.shape == (len(want) + 9, 3)
    assert mask.cpu().tolist() == [True] * len(want) + [False] * 9
    assert sorted(_rows(indices, mask)) == want
    assert not indices.cpu()[len(want) :].any()
    # Fewer rows than True elements: a sample without repeats.
    some, some_mask = torch_npu.npu_random_choice_with_mask(on_npu(x), 5)
    got = _rows(some, some_mask)
    assert len(got) == len(set(got)) == 5 and set(got) <= set(want)


def test_seeds_fix_the_order_and_zero_seeds_draw_from_torch():
    x = on_npu(torch.ones(200, dtype=torch.bool))
    first = torch_npu.npu_random_choice_with_mask(x, 50, 7, 3)[0].cpu()
    again = torch_npu.npu_random_choice_with_mask(x, 50, 7, 3)[0].cpu()
    other = torch_npu.npu_random_choice_with_mask(x, 50, 7, 4)[0].cpu()
    assert torch.equal(first, again) and not torch.equal(first, other)
    torch.manual_seed(11)
    a = torch_npu.npu_random_choice_with_mask(x, 50)[0].cpu()
    torch.manual_seed(11)
    b = torch_npu.npu_random_choice_with_mask(x, 50)[0].cpu()
    c = torch_npu.npu_random_choice_with_mask(x, 50)[0].cpu()
    assert torch.equal(a, b) and not torch.equal(b, c)
    assert not torch.equal(a.flatten(), torch.arange(50, dtype=torch.int32))  # shuffled


def test_op_plugin_checks():
    with pytest.raises(RuntimeError, match="input.dtype should be bool"):
        torch_npu.npu_random_choice_with_mask(on_npu(torch.ones(3)), 2)
    with pytest.raises(RuntimeError, match=r"input.dim should be in \[1, 5\]"):
        torch_npu.npu_random_choice_with_mask(on_npu(torch.ones((1,) * 6, dtype=torch.bool)), 2)
    with pytest.raises(RuntimeError, match="count must greater than 0"):
        torch_npu.npu_random_choice_with_mask(on_npu(torch.ones(3, dtype=torch.bool)), 0)
