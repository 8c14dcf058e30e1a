"""O1's casts on the NPU: a weight whose cached fp16 cast is used twice in
one iteration, nn.RNN (torch 1.13 calls _VF.rnn_* directly), nn.GRU and nn.LSTM (weights not in
one flat buffer), and the RNN cells. Prints a JSON dict of what each produced (or, for an RNN
that refuses an fp16 input beside its fp32 weights, its message): fp16 inputs are taken while
amp casts, on every torch; with casts disabled, or amp deactivated, torch >= 2.1 refuses them."""

import json

import torch
import torch.nn as nn

from apex import amp

torch.manual_seed(0)
handle = amp.init(enabled=True)
seen = {}
lin = nn.Linear(4, 4).npu()
twice = lin(lin(torch.randn(2, 4).npu()))  # the same cached cast of lin.weight, twice
twice.float().sum().backward()
seen["cached_twice"] = [twice.type(), lin.weight.grad.type()]
for name, make in (
    ("rnn_relu", lambda n, b: nn.RNN(8, 8, n, nonlinearity="relu", bidirectional=b)),
    ("rnn_tanh", lambda n, b: nn.RNN(8, 8, n, bidirectional=b)),
    ("gru", lambda n, b: nn.GRU(8, 8, n, bidirectional=b)),
    ("lstm", lambda n, b: nn.LSTM(8, 8, n, bidirectional=b)),
):
    for layers, bidir in ((1, False), (2, True)):
        rnn = make(layers, bidir).npu()
        for dtype in (torch.float32, torch.float16):
            x = torch.randn(5, 3, 8).to("npu", dtype).requires_grad_()
            try:
                out, _ = rnn(x)
            except ValueError as e:  # torch 2.x's nn.RNN checks dtypes before apex casts
                seen[f"{name}-{layers}-{bidir}-{dtype}"] = ["refused", str(e)]
                continue
            out[-1].float().sum().backward()
            seen[f"{name}-{layers}-{bidir}-{dtype}"] = [
                out.type(),
                str(x.grad.dtype),
                str(rnn.weight_ih_l0.grad.dtype),
            ]
for cell in (nn.RNNCell(8, 8), nn.GRUCell(8, 8), nn.LSTMCell(8, 8)):
    h = cell.npu()(torch.randn(3, 8).npu())
    seen[type(cell).__name__] = (h[0] if isinstance(h, tuple) else h).type()


def half_input_to_fp32_lstm():
    """What an fp16 input to an fp32 nn.LSTM gives: "ran", or the error's message."""
    lstm = nn.LSTM(8, 8).npu()
    try:
        lstm(torch.randn(5, 3, 8).npu().half())
    except (ValueError, RuntimeError) as e:
        return str(e)
    return "ran"


with amp.disable_casts():
    seen["casts_disabled"] = half_input_to_fp32_lstm()
handle._deactivate()
seen["deactivated"] = half_input_to_fp32_lstm()
print(json.dumps(seen))
