"""The usage examples of Ascend's Apex-patch manual (amp, combine_grad, the NpuFused optimizers,
cast registration) and of a widely read NVIDIA Apex guide, as written, with .cuda() read as
.npu()."""

import torch
import torch.nn as nn
import apex
from apex import amp

D_in, D_out = 16, 4
x, y = torch.randn(32, D_in).npu(), torch.randn(32, D_out).npu()


def train(model, optimizer, steps=5):
    for _ in range(steps):
        loss = ((model(x).float() - y) ** 2).mean()
        if not torch.isnan(loss):
            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
    return float(loss)


def fresh_amp():
    # amp.initialize is meant to be called once per process; the examples each start afresh.
    from apex.amp._amp_state import _amp_state

    for name in ("handle",):
        if hasattr(_amp_state, name):
            delattr(_amp_state, name)


results = {}
# the manual's quick start: amp O1; combine_grad; NpuFusedSGD with combine_grad
model = torch.nn.Linear(D_in, D_out).npu()
optimzier = torch.optim.SGD(model.parameters(), lr=1e-3)
model, optimizer = amp.initialize(model, optimzier, opt_level="O1")
results["quick_start_O1"] = train(model, optimizer)

model = torch.nn.Linear(D_in, D_out).npu()
optimzier = torch.optim.SGD(model.parameters(), lr=1e-3)
model, optimizer = amp.initialize(model, optimzier, opt_level="O1", combine_grad=True)
results["quick_start_combine_grad"] = train(model, optimizer)

model = torch.nn.Linear(D_in, D_out).npu()
optimzier = apex.optimizers.NpuFusedSGD(model.parameters(), lr=1e-3)
model, optimizer = amp.initialize(model, optimzier, opt_level="O1", combine_grad=True)
results["quick_start_fused"] = train(model, optimizer)

opt = apex.optimizers.NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
results["quick_start_fused_ctor"] = type(opt).__name__

model = torch.nn.Linear(D_in, D_out).npu()
optim = torch.optim.SGD(model.parameters(), lr=1e-3)
model, optim = apex.amp.initialize(
    model, optim, opt_level="O3", keep_batchnorm_fp32=True, ddp_replica_count=8
)
results["quick_start_O3_example"] = train(model, optim)

# the manual's O2 examples: a static loss scale; NpuFusedSGD with combine_grad; cast registration
model = torch.nn.Linear(D_in, D_out).npu()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=32.0)
results["o2_O2_static"] = train(model, optimizer)

model = torch.nn.Linear(D_in, D_out).npu()
optimizer = apex.optimizers.NpuFusedSGD(model.parameters(), lr=1e-3, momentum=0.9)
model, optimizer = amp.initialize(
    model, optimizer, opt_level="O2", loss_scale=32.0, combine_grad=True
)
results["o2_O2_fused"] = train(model, optimizer)

model = torch.nn.Linear(D_in, D_out).npu()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale="dynamic")
results["o2_O2_dynamic"] = train(model, optimizer)

amp.register_half_function(torch, "bmm")
amp.register_float_function(torch, "sigmoid")
amp.register_float_function(torch, "softmax")
model = torch.nn.Linear(D_in, D_out).npu()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
results["o2_bmm_half"] = str(
    torch.bmm(torch.randn(2, 3, 4).npu(), torch.randn(2, 4, 5).npu()).dtype
)
results["guide_sigmoid_float"] = str(torch.sigmoid(torch.randn(3).half().npu()).dtype)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(D_in, 8)
        self.head = nn.Linear(8, D_out)

    def forward(self, v):
        return self.head(torch.relu(self.encoder(v)))


# the NVIDIA guide: two parameter groups (encoder at a lower lr), O1
net = Net()
net.npu()
net.train()
params_low_lr, params_high_lr = [], []
for n, p in net.named_parameters():
    (params_low_lr if "encoder" in n else params_high_lr).append(p)
opt = torch.optim.Adam(
    [{"params": params_low_lr, "lr": 5e-5}, {"params": params_high_lr, "lr": 1e-4}],
    weight_decay=1e-4,
)
net, opt = amp.initialize(net, opt, opt_level="O1")
results["guide_groups"] = train(net, opt)

# the manual: merged groups with NpuFusedSGD (every group fused here)
net = Net().npu()
optimizer = apex.optimizers.NpuFusedSGD(
    [{"params": list(net.encoder.parameters())}, {"params": net.head.parameters(), "lr": 0.01}],
    lr=0.001,
    momentum=0.9,
    weight_decay=1e-4,
)
net, optimizer = amp.initialize(net, optimizer, opt_level="O2", loss_scale=128.0, combine_grad=True)
results["o2_groups_fused"] = train(net, optimizer)
print(repr(results))
