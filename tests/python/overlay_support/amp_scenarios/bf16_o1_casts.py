"""O1's casts in bfloat16 on an emulated 910B (``bf16_o1_casts.py LEVEL``: O1 with
patch_torch_functions_type=torch.bfloat16, or O4): the white list (linear, matmul, conv) runs
in bf16 with one cached cast of a weight used twice, the black list (F.softmax) in fp32, mixed
bf16/fp32 arguments promote to fp32, every RNN and RNN cell runs in bf16 with fp32 weight
gradients, register_bfloat16_function / register_half_function cast as named, and the banned
binary_cross_entropy refuses bf16. Prints a JSON dict of the dtypes seen."""

import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp

level = sys.argv[1]


def scaled_cube(x):
    return x * x * x


def doubled(x):
    return x + x


holder = type(
    "Holder", (), {"scaled_cube": staticmethod(scaled_cube), "doubled": staticmethod(doubled)}
)
amp.register_bfloat16_function(holder, "scaled_cube")
amp.register_half_function(holder, "doubled")
torch.manual_seed(0)
lin = nn.Linear(4, 4).npu()
conv = nn.Conv2d(2, 3, 3).npu()
cells = [nn.RNNCell(8, 8).npu(), nn.GRUCell(8, 8).npu(), nn.LSTMCell(8, 8).npu()]
rnns = {
    "rnn_tanh": nn.RNN(8, 8, 2, bidirectional=True).npu(),
    "rnn_relu": nn.RNN(8, 8, nonlinearity="relu").npu(),
    "gru": nn.GRU(8, 8, 2, bidirectional=True).npu(),
    "lstm": nn.LSTM(8, 8, 2, bidirectional=True).npu(),
}
opt = torch.optim.SGD(
    [p for m in [lin, conv] + cells + list(rnns.values()) for p in m.parameters()], lr=0.1
)
kwargs = dict(patch_torch_functions_type=torch.bfloat16) if level == "O1" else {}
[lin, conv], opt = amp.initialize([lin, conv], opt, opt_level=level, verbosity=0, **kwargs)
seen = {}
x = torch.randn(2, 4).npu()
twice = lin(lin(x))  # the same cached bf16 cast of lin.weight, twice
twice.float().sum().backward()
seen["cached_twice"] = [str(twice.dtype), str(lin.weight.grad.dtype)]
seen["matmul"] = str(torch.matmul(x, x.t()).dtype)
seen["conv2d"] = str(conv(torch.randn(1, 2, 5, 5).npu()).dtype)
seen["softmax"] = str(F.softmax(twice, -1).dtype)
seen["promote_add"] = str(torch.add(twice, x).dtype)
seen["promote_cat"] = str(torch.cat([twice, x]).dtype)
seen["user_bf16"] = str(holder.scaled_cube(x).dtype)
seen["user_half"] = str(holder.doubled(x).dtype)
for name, rnn in rnns.items():
    inp = torch.randn(5, 3, 8).npu().requires_grad_()
    out, _ = rnn(inp)
    out[-1].float().sum().backward()
    seen[name] = [str(out.dtype), str(inp.grad.dtype), str(rnn.weight_ih_l0.grad.dtype)]
# A bf16 activation (what O1's ops give) into an RNN of fp32 weights, as in a model.
inp = torch.randn(5, 3, 8).npu().bfloat16().requires_grad_()
out, _ = rnns["lstm"](inp)
out[-1].float().sum().backward()
seen["lstm_bf16_input"] = [str(inp.dtype), str(out.dtype), str(inp.grad.dtype)]
for cell in cells:
    h = cell(torch.randn(3, 8).npu())
    seen[type(cell).__name__] = str((h[0] if isinstance(h, tuple) else h).dtype)
try:
    F.binary_cross_entropy(torch.rand(3).npu().bfloat16(), torch.rand(3).npu().bfloat16())
    seen["binary_cross_entropy"] = "ran"
except NotImplementedError as e:
    seen["binary_cross_entropy"] = "refused: " + str(e).strip().splitlines()[0]
print(json.dumps(seen))
