"""torch_npu.contrib.module's NpuPreGenDropout (ESPnet2's dropout), FastBatchNorm*,
ChannelShuffle, NpuDropPath (Swin's drop path) and Prefetcher: the emulated NPU gives their behaviour on the NPU (ROIAlign and DCNv2 are tested
with their operators)."""

import pytest
import torch

from overlay_support.npu_op_checks import on_npu, randn, torch_npu
from torch_npu.contrib.module import (
    ChannelShuffle,
    FastBatchNorm1d,
    FastBatchNorm2d,
    FastBatchNorm3d,
    NpuDropPath,
    NpuPreGenDropout,
)


@pytest.fixture(autouse=True)
def fresh_dropout_registry():
    NpuPreGenDropout.prob.clear()
    NpuPreGenDropout.task_dict.clear()
    yield
    NpuPreGenDropout.prob.clear()
    NpuPreGenDropout.task_dict.clear()


class _FeedForward(torch.nn.Module):
    """ESPnet2's PositionwiseFeedForward on the NPU: its dropout is NpuPreGenDropout."""

    def __init__(self, width=16, hidden=32, p=0.25):
        super().__init__()
        self.w_1, self.w_2 = torch.nn.Linear(width, hidden), torch.nn.Linear(hidden, width)
        self.dropout_npu = NpuPreGenDropout(p)

    def forward(self, x):
        return self.w_2(self.dropout_npu(torch.relu(self.w_1(x))))


def test_a_probability_without_masks_is_refused():
    layer = NpuPreGenDropout(0.5)
    with pytest.raises(RuntimeError, match=r"enable_dropout_ensemble\(model\)"):
        layer(on_npu(torch.ones(4, 8)))
    assert NpuPreGenDropout(0.0)(on_npu(torch.ones(3))).sum() == 3  # p = 0 needs no masks


def test_masks_drop_scale_and_are_handed_out_in_order():
    torch.manual_seed(0)
    model = _FeedForward(p=0.25).npu()
    NpuPreGenDropout.enable_dropout_ensemble(model)
    layer = model.dropout_npu
    x = on_npu(torch.ones(64, 128))
    told = layer([list(x.shape), x.dtype, x.device])  # the mask x will take, not taken
    assert told.dtype == torch.uint8 and told.numel() == 64 * 128 // 8
    y = layer(x)
    assert torch.equal(y.cpu(), torch_npu.npu_dropout_do_mask(x, told, 0.25)[0].cpu())
    kept = (y.cpu() != 0).float().mean().item()
    assert 0.70 < kept < 0.80, kept
    assert torch.allclose(y.cpu()[y.cpu() != 0], torch.tensor(1 / 0.75))
    z = layer(x)  # the next bytes of the buffer
    assert not torch.equal(z.cpu(), y.cpu())
    layer.eval()  # Ascend's layer drops in eval mode too
    assert (layer(x).cpu() == 0).any()


def test_each_forward_pass_of_the_model_starts_its_masks_again():
    model = _FeedForward().npu()
    NpuPreGenDropout.enable_dropout_ensemble(model)
    buffer = NpuPreGenDropout.task_dict[0.25]
    x = on_npu(randn(8, 16, seed=1))
    model(x)
    assert buffer.idx == 0  # restarted after the pass
    model.dropout_npu(on_npu(torch.ones(8, 32)))
    assert buffer.idx == 8 * 32 // 8  # 256 elements: two 128-element blocks of bits


def test_esp_style_model_trains_and_the_gradient_follows_the_mask():
    torch.manual_seed(0)
    model = _FeedForward(p=0.1).npu()
    NpuPreGenDropout.enable_dropout_ensemble(model)
    x, target = on_npu(randn(32, 16, seed=2)), on_npu(randn(32, 16, seed=3))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.6 * losses[0], losses
    leaf = on_npu(torch.ones(4, 64), grad=True)
    mask = model.dropout_npu([[4, 64], torch.float32, leaf.device])
    model.dropout_npu(leaf).sum().backward()
    want = torch_npu.npu_dropout_do_mask(on_npu(torch.ones(4, 64)), mask, 0.1)[0]
    assert torch.equal(leaf.grad.cpu(), want.cpu())


@pytest.mark.parametrize(
    "cls,base,shape",
    [
        (FastBatchNorm1d, torch.nn.BatchNorm1d, (8, 3)),
        (FastBatchNorm2d, torch.nn.BatchNorm2d, (4, 3, 5, 5)),
        (FastBatchNorm3d, torch.nn.BatchNorm3d, (2, 3, 2, 4, 4)),
    ],
)
def test_fast_batch_norm_counts_in_int32_and_normalises_as_torch(cls, base, shape):
    fast, plain = cls(3, momentum=None).npu(), base(3, momentum=None).npu()
    assert fast.num_batches_tracked.dtype == torch.int32
    assert fast.num_batches_tracked.device.type == "npu"
    x = on_npu(randn(*shape, seed=4))
    for _ in range(3):
        torch.testing.assert_close(fast(x).cpu(), plain(x).cpu())
    assert int(fast.num_batches_tracked) == 3 and fast.num_batches_tracked.dtype == torch.int32
    torch.testing.assert_close(fast.running_mean.cpu(), plain.running_mean.cpu())
    torch.testing.assert_close(fast.running_var.cpu(), plain.running_var.cpu())
    fast.eval(), plain.eval()  # the running statistics normalise, the counter stays
    torch.testing.assert_close(fast(x).cpu(), plain(x).cpu())
    assert int(fast.num_batches_tracked) == 3
    again = cls(3).npu()
    again.load_state_dict(plain.state_dict())  # an int64 counter loads, cast
    assert int(again.num_batches_tracked) == 3 and again.num_batches_tracked.dtype == torch.int32
    base(3).load_state_dict(fast.state_dict())
    with pytest.raises(ValueError, match=r"got 1D input1"):
        fast(on_npu(torch.ones(3)))


def test_fast_batch_norms_are_torch_npus_classes_at_its_module_paths():
    from torch.nn.modules.batchnorm import _NormBase as TorchNormBase

    from torch_npu.contrib.module import _batchnorm_with_int32_count as real_path
    from torch_npu.contrib.module import batchnorm_with_int32_count

    for module in (batchnorm_with_int32_count, torch_npu.contrib):
        assert module.FastBatchNorm2d is real_path.FastBatchNorm2d
    # As on an NPU: torch's _NormBase, not torch's BatchNorm2d (nor its _BatchNorm).
    assert issubclass(FastBatchNorm2d, real_path._BatchNorm)
    assert issubclass(real_path._BatchNorm, real_path._NormBase)
    assert issubclass(real_path._NormBase, TorchNormBase)
    assert not issubclass(FastBatchNorm2d, torch.nn.modules.batchnorm._BatchNorm)
    layer = real_path._BatchNorm(num_features=5)  # any rank once _check_input_dim allows it
    layer._check_input_dim = lambda x: None
    x = randn(6, 5, seed=5)
    torch.testing.assert_close(
        layer(x), torch.nn.functional.batch_norm(x, None, None, torch.ones(5), torch.zeros(5), True)
    )
    assert int(layer.num_batches_tracked) == 1
    untracked = FastBatchNorm1d(5, track_running_stats=False)
    assert untracked.num_batches_tracked is None and untracked.running_mean is None
    untracked.eval()  # no running statistics: the batch's, even in eval mode
    torch.testing.assert_close(untracked(x), layer(x))


def test_fast_sync_batch_norm_without_a_process_group_is_a_batch_norm():
    sync = torch_npu.contrib.module.FastSyncBatchNorm(4, momentum=0.5).npu()
    plain = torch.nn.BatchNorm2d(4, momentum=0.5).npu()
    x = on_npu(randn(2, 4, 3, 3, seed=6))
    torch.testing.assert_close(sync(x).cpu(), plain(x).cpu())
    torch.testing.assert_close(sync.running_mean.cpu(), plain.running_mean.cpu())
    assert sync.num_batches_tracked.dtype == torch.int32
    assert torch_npu.contrib.module.FastSyncBatchNorm(4, device="npu").weight.device.type == "npu"
    with pytest.raises(ValueError, match="at least 2D"):
        sync(on_npu(torch.ones(4)))
    with pytest.raises(ValueError, match="non-zero"):
        sync(on_npu(torch.ones(2, 0, 3)))
    converted = type(sync).convert_sync_batchnorm(torch.nn.Sequential(torch.nn.BatchNorm2d(4)))
    assert isinstance(converted[0], torch.nn.SyncBatchNorm)


def test_the_prefetcher_hands_over_every_batch_on_the_npu_then_none():
    from torch_npu.contrib.module.prefetcher import Prefetcher

    data = torch.utils.data.TensorDataset(torch.arange(10.0).view(5, 2), torch.arange(5))
    loader = torch.utils.data.DataLoader(data, batch_size=2)
    prefetcher = Prefetcher(loader, stream=torch.npu.Stream())
    seen = []
    batch_input, target = prefetcher.next()
    while batch_input is not None:
        assert batch_input.device.type == target.device.type == "npu"
        seen.append((batch_input.cpu(), target.cpu()))
        batch_input, target = prefetcher.next()
    assert target is None and len(seen) == 3
    assert torch.equal(torch.cat([b for b, _ in seen]), torch.arange(10.0).view(5, 2))
    assert torch.equal(torch.cat([t for _, t in seen]), torch.arange(5))


def _shufflenet_shuffle(x, groups):
    """ShuffleNet V2's channel_shuffle: a view, a transpose and a flatten."""
    n, c, h, w = x.shape
    return x.view(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)


@pytest.mark.parametrize("groups", [2, 3])
@pytest.mark.parametrize("split", [False, True])
def test_channel_shuffle_is_shufflenets_of_the_concatenation(groups, split):
    a, b = randn(2, 6, 3, 3, seed=1), randn(2, 6, 3, 3, seed=2)
    grads = randn(2, 12, 3, 3, seed=3)
    want_a, want_b = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
    want = _shufflenet_shuffle(torch.cat([want_a, want_b], 1), groups)
    want.backward(grads)
    got_a, got_b = on_npu(a, grad=True), on_npu(b, grad=True)
    model = ChannelShuffle(12, groups=groups, split_shuffle=split).npu()
    got = model(got_a, got_b)
    if split:
        assert isinstance(got, tuple) and len(got) == 2
        assert all(part.device.type == "npu" for part in got)
        torch.cat(got, 1).backward(on_npu(grads))
        got = torch.cat([part.detach().cpu() for part in got], 1)
    else:
        assert got.device.type == "npu" and got.shape == (2, 12, 3, 3)
        got.backward(on_npu(grads))
        got = got.detach().cpu()
    assert torch.equal(got, want.detach())
    assert torch.equal(got_a.grad.cpu(), want_a.grad)
    assert torch.equal(got_b.grad.cpu(), want_b.grad)
    assert not list(model.state_dict())  # no parameters or buffers, as Ascend's


def test_channel_shuffle_takes_the_first_in_channels():
    x = randn(1, 2, 2, 2, seed=4)
    same = ChannelShuffle(2, split_shuffle=False).eval()(on_npu(x), on_npu(x))
    assert torch.equal(same.cpu(), x)  # channels 0, 1 of [x, x]


@pytest.fixture
def fresh_drop_path_queues():
    NpuDropPath.task_dict.clear()
    yield
    NpuDropPath.task_dict.clear()


def test_drop_path_draws_from_queues_the_model_fills_ahead(fresh_drop_path_queues):
    layer = NpuDropPath(0.5).npu()
    model = torch.nn.Sequential(layer, torch.nn.Identity())
    x = on_npu(torch.ones(64, 3, 2))
    # No queue yet: the first pass counts what it needs and drops nothing.
    assert torch.equal(model(x).cpu(), x.cpu())
    NpuDropPath.enable_droppath_ensemble(model)
    assert NpuDropPath.droppath_stream is not None
    torch.npu.manual_seed(7)
    got = model(x).cpu()
    torch.npu.manual_seed(7)
    random = torch.rand((64, 1, 1), device="npu").cpu()
    want = torch.ones(64, 3, 2) / 0.5 * torch.floor(random + 0.5)
    assert torch.equal(got, want)
    kept = got[:, 0, 0] != 0
    assert 0 < int(kept.sum()) < 64  # whole samples dropped or scaled by 1 / keep_prob
    assert torch.all(got[kept] == 2) and torch.all(got[~kept] == 0)
    (task,) = NpuDropPath.task_dict.values()
    assert task.request_count == 1 and task.rand_queue == []
    layer.eval()
    assert torch.equal(model(x).cpu(), x.cpu())
    assert torch.equal(NpuDropPath(0.0).npu()(x).cpu(), x.cpu())
    with pytest.raises(RuntimeError, match="input type error"):
        layer.train()([x])


def test_drop_path_gradient_is_the_kept_scale(fresh_drop_path_queues):
    layer = NpuDropPath(0.25).npu()
    model = torch.nn.Sequential(layer)
    x = on_npu(randn(32, 4, seed=5), grad=True)
    model(x)
    NpuDropPath.enable_droppath_ensemble(model)
    out = model(x)
    out.sum().backward()
    grad = x.grad.cpu()
    assert set(grad.flatten().tolist()) == {0.0, torch.tensor(1 / 0.75).item()}
    assert torch.equal(grad, grad[:, :1].expand(32, 4))  # whole samples
    assert torch.allclose(out.detach().cpu(), x.detach().cpu() * grad)
