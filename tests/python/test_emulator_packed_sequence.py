"""Packed sequences (torch.nn.utils.rnn) with NPU data and host lengths, as torch requires them:
``pack_padded_sequence`` of NPU data with CPU lengths, nn.LSTM and nn.GRU over the packed
sequence, ``pad_packed_sequence`` back, and the backward through all of it.

In fp32 the emulated NPU runs the same CPU kernels as the host, so outputs and gradients are the
host run's: bit for bit on torch 2.x, within 1e-6 of the largest value on torch 1.13 (a few
results differ in their last bit there: the NPU's outputs are contiguous, the host's need not
be, and a matmul may then sum in another order). fp16 on a 910 is checked against the same layer in float64 on the same
fp16 values: within 4e-3 of the largest value (the decomposition rounds every gate to fp16, a few
units in the last place of values below 1), and the general and fast emulation paths agree bit
for bit. The bookkeeping stays where torch keeps it: batch_sizes and the unpacked lengths on the
host, the data and the sort order on the NPU.
"""

import pytest
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401
from torch_npu._fp16 import path as emulation_path  # noqa: E402

LENGTHS = [6, 3, 5, 1]  # unsorted: enforce_sorted=False sorts them on the way in
LAYERS = {
    "LSTM": lambda: nn.LSTM(5, 7, num_layers=2, batch_first=True, bidirectional=True),
    "GRU": lambda: nn.GRU(5, 7, num_layers=2),
}


def _batch(batch_first, dtype=torch.float32):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(len(LENGTHS), max(LENGTHS), 5, generator=g)
    x = x if batch_first else x.transpose(0, 1).contiguous()
    weight = torch.randn(len(LENGTHS), max(LENGTHS), 14 if batch_first else 7, generator=g)
    return x.to(dtype), weight if batch_first else weight.transpose(0, 1).contiguous()


def _run(layer, x, weight, lengths, batch_first):
    """Forward over the packed batch, padded back; the gradients of a weighted sum of the
    padded output and the last hidden state: (output, lengths out, h_n, grads by name)."""
    x = x.detach().requires_grad_()
    packed = pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=False)
    out, state = layer(packed)
    padded, lengths_out = pad_packed_sequence(out, batch_first=batch_first)
    h = state[0] if isinstance(state, tuple) else state
    loss = (padded.float() * weight).sum() + h.float().sum()
    loss.backward()
    grads = {"input": x.grad}
    grads.update({name: p.grad for name, p in layer.named_parameters()})
    return padded, lengths_out, h, grads, packed


def _same(a, b):
    """The host run's values: bit for bit on torch 2.x, to the last bit on 1.13 (above)."""
    if torch.__version__.startswith("1."):
        return (a - b).abs().max().item() <= 1e-6 * max(b.abs().max().item(), 1.0)
    return torch.equal(a, b)


@pytest.mark.parametrize("name", list(LAYERS))
def test_fp32_packed_run_is_the_host_run(name):
    batch_first = name == "LSTM"
    torch.manual_seed(0)
    host_layer = LAYERS[name]()
    npu_layer = LAYERS[name]()
    npu_layer.load_state_dict(host_layer.state_dict())
    npu_layer = npu_layer.npu()
    x, weight = _batch(batch_first)
    lengths = torch.tensor(LENGTHS)
    want = _run(host_layer, x, weight, lengths, batch_first)
    got = _run(npu_layer, x.npu(), weight.npu(), lengths, batch_first)

    padded, lengths_out, h, grads, packed = got
    assert packed.data.device == torch.device("npu:0")
    assert packed.batch_sizes.device.type == "cpu"
    assert packed.sorted_indices.device == torch.device("npu:0")
    assert packed.unsorted_indices.device == torch.device("npu:0")
    assert torch.equal(packed.batch_sizes, want[4].batch_sizes)
    assert padded.device == torch.device("npu:0") and h.device == torch.device("npu:0")
    assert lengths_out.device.type == "cpu" and lengths_out.tolist() == LENGTHS
    assert _same(padded.cpu(), want[0])
    assert _same(h.cpu(), want[2])
    assert set(grads) == set(want[3])
    for key, grad in grads.items():
        assert grad.device == torch.device("npu:0"), key
        assert _same(grad.cpu(), want[3][key]), key


def _fp16_run(name):
    torch.manual_seed(0)
    layer = LAYERS[name]().half()
    reference = LAYERS[name]().double()
    reference.load_state_dict({k: v.double() for k, v in layer.state_dict().items()})
    x, weight = _batch(name == "LSTM", torch.float16)
    lengths = torch.tensor(LENGTHS)
    got = _run(layer.npu(), x.npu(), weight.npu(), lengths, name == "LSTM")
    want = _run(reference, x.double(), weight.double(), lengths, name == "LSTM")
    return got, want


@pytest.mark.parametrize("name", list(LAYERS))
def test_fp16_packed_run_follows_float64_and_both_paths_agree(name, chip910):
    runs = {}
    for path in ("general", "fast"):
        with emulation_path.using(path):
            runs[path] = _fp16_run(name)
    (got, want), (fast, _) = runs["general"], runs["fast"]
    assert got[0].dtype == torch.float16 and got[0].device == torch.device("npu:0")
    for a, b in zip((got[0], got[2]), (want[0], want[2])):
        scale = b.abs().max().item()
        assert (a.cpu().double() - b).abs().max().item() <= 4e-3 * max(scale, 1.0)
    for key, grad in got[3].items():
        ref = want[3][key]
        scale = ref.abs().max().item()
        assert (grad.cpu().double() - ref).abs().max().item() <= 4e-3 * max(scale, 1.0), key
    # The general path is the reference of the fast one: the same bits.
    assert torch.equal(got[0].cpu(), fast[0].cpu()) and torch.equal(got[2].cpu(), fast[2].cpu())
    for key, grad in got[3].items():
        assert torch.equal(grad.cpu(), fast[3][key].cpu()), key


def test_lengths_on_the_npu_are_refused_as_torch_refuses_them():
    x = torch.randn(3, 4, 5).npu()
    with pytest.raises(RuntimeError, match=r"'lengths' argument should be a 1D CPU int64 tensor"):
        pack_padded_sequence(x, torch.tensor([4, 2, 1]).npu(), batch_first=True)


def test_lists_of_lengths_and_host_data_keep_torchs_behaviour():
    x = torch.randn(3, 4, 5)
    packed = pack_padded_sequence(x.npu(), [4, 2, 1], batch_first=True)
    assert packed.data.device == torch.device("npu:0")
    host = pack_padded_sequence(x, [4, 2, 1], batch_first=True)
    assert host.data.device.type == "cpu" and not host.data.is_npu
    assert torch.equal(packed.data.cpu(), host.data)
    assert torch.equal(packed.batch_sizes, host.batch_sizes)
