"""torch_npu.contrib.module's NpuCachedDropout (= NpuFairseqDropout): a layer passes its input
through until the model's forward pass has made masks for its shape, then drops with them in
order; and the module paths Ascend's code imports the ensemble dropouts from."""

import pytest
import torch

from overlay_support.npu_op_checks import on_npu, randn, torch_npu
from torch_npu.contrib.module import NpuCachedDropout, NpuFairseqDropout


@pytest.fixture(autouse=True)
def fresh_registry():
    NpuCachedDropout.task_dict.clear()
    yield
    NpuCachedDropout.task_dict.clear()


class _Block(torch.nn.Module):
    """A Fairseq-style block: two dropouts of one probability on two shapes."""

    def __init__(self, p=0.4):
        super().__init__()
        self.linear = torch.nn.Linear(16, 24)
        self.first, self.second = NpuCachedDropout(p), NpuCachedDropout(p)

    def forward(self, x):
        return self.second(self.linear(self.first(x)))


def test_a_shape_passes_through_until_the_model_made_its_masks_then_drops_with_them():
    torch.manual_seed(0)
    model = _Block().npu()
    NpuCachedDropout.enable_dropout_ensemble(model)
    x = on_npu(torch.ones(32, 16))
    first = model.first(x)
    assert first is x  # no mask of this shape yet: one more requested, input unchanged
    model(x)  # passes through again (two requests now), then makes the masks requested
    task = NpuCachedDropout.task_dict[(x.shape, x.dtype, x.device, 0.4)]
    assert task.request_count == 2 and len(task.mask_queue) == 2
    mask = task.mask_queue[0][0]
    assert mask.dtype == torch.uint8 and mask.numel() == 32 * 16 // 8
    y = model.first(x)  # takes the first mask made
    assert torch.equal(y.cpu(), torch_npu.npu_dropout_do_mask(x, mask, 0.4)[0].cpu())
    kept = (y.cpu() != 0).float().mean().item()
    assert 0.45 < kept < 0.75, kept
    assert torch.allclose(y.cpu()[y.cpu() != 0], torch.tensor(1 / 0.6))
    model.eval()  # as torch_npu's, the masks apply in eval mode too
    z = model.first(x)
    assert not torch.equal(z.cpu(), y.cpu()) and (z.cpu() == 0).any()
    assert not task.mask_queue and model.first(x) is x  # none left: through, one more asked


def test_asking_with_shape_dtype_device_hands_out_the_next_mask():
    model = _Block().npu()
    NpuCachedDropout.enable_dropout_ensemble(model)
    request = [[4, 16], torch.float32, on_npu(torch.ones(1)).device]
    assert model.first(request) is None  # nothing made yet: counted, nothing handed out
    model(on_npu(randn(8, 16, seed=1)))
    mask = model.first(request)  # a tensor of that shape shares the key
    assert mask.dtype == torch.uint8 and mask.numel() == 128 // 8
    assert model.first(request) is None  # the queue held one


def test_gradient_follows_the_mask_and_p_zero_never_masks():
    torch.manual_seed(1)
    layer = NpuFairseqDropout(0.3)
    model = torch.nn.Sequential(layer).npu()
    NpuCachedDropout.enable_dropout_ensemble(model)
    model(on_npu(torch.ones(6, 40)))
    mask = NpuCachedDropout.task_dict[
        (torch.Size([6, 40]), torch.float32, on_npu(torch.ones(1)).device, 0.3)
    ].mask_queue[0][0]
    leaf = on_npu(torch.ones(6, 40), grad=True)
    layer(leaf).sum().backward()
    want = torch_npu.npu_dropout_do_mask(on_npu(torch.ones(6, 40)), mask, 0.3)[0]
    assert torch.equal(leaf.grad.cpu(), want.cpu())
    x = on_npu(torch.ones(3))
    assert (
        NpuCachedDropout(0.0)(x) is x
        and NpuCachedDropout(0.0)([[3], torch.float32, x.device]) is None
    )
    assert not any(key[-1] == 0.0 for key in NpuCachedDropout.task_dict)


def test_other_inputs_are_refused_and_the_stream_is_made_once():
    with pytest.raises(RuntimeError, match="tensor or \\[shape, dtype, device\\]"):
        NpuCachedDropout(0.5)("invalid_input")
    NpuCachedDropout.enable_dropout_ensemble(torch.nn.Identity())
    stream = NpuCachedDropout.dropout_stream
    assert stream is not None
    NpuCachedDropout.enable_dropout_ensemble(torch.nn.Identity())
    assert NpuCachedDropout.dropout_stream is stream
    assert NpuFairseqDropout is NpuCachedDropout and torch_npu.contrib.NpuFairseqDropout


def test_the_ensemble_dropouts_live_at_torch_npus_module_paths():
    from torch_npu.contrib.module import NpuPreGenDropout, _ensemble_dropout, ensemble_dropout

    assert _ensemble_dropout.NpuPreGenDropout is NpuPreGenDropout
    assert ensemble_dropout.NpuCachedDropout is NpuCachedDropout
    task = _ensemble_dropout._PreGenDropoutTask("npu:0", 0.5)  # torch_npu's argument order
    assert (task.device, task.p, task.idx) == ("npu:0", 0.5, 0)
    assert isinstance(NpuCachedDropout(0.5), torch.nn.Dropout)
    with pytest.raises(ValueError):
        NpuCachedDropout(1.5)  # torch.nn.Dropout's check
