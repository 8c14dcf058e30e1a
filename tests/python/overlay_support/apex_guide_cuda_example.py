"""The usage example of a widely read NVIDIA Apex guide, as its reader writes it for a GPU (.cuda(), Adam with two
parameter groups, amp O1, register_float_function, the isnan guard, scale_loss, and the
checkpoint save and restore it recommends), run unchanged after Ascend's automatic migration.
    python apex_guide_cuda_example.py train|restore CHECKPOINT

Prints the first and last loss, whether the restored model equals the saved one, the device."""

import sys

import torch_npu.contrib.transfer_to_npu  # noqa: F401 - the only line a migrating user adds

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam
from apex import amp


class xxxNet(nn.Module):  # noqa: N801 - the guide's name
    def __init__(self, using_amp=True):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 1, 1)
        if using_amp:
            amp.register_float_function(torch, "sigmoid")
            amp.register_float_function(torch, "softmax")

    def forward(self, x):
        return torch.sigmoid(self.head(self.encoder(x)))


mode, path = sys.argv[1], sys.argv[2]
opt_level = "O1"
torch.manual_seed(0)
net = xxxNet()
net.cuda()
net.train()
params_low_lr, params_high_lr = [], []
for n, p in net.named_parameters():
    if "encoder" in n:
        params_low_lr.append(p)
    else:
        params_high_lr.append(p)
opt = Adam(
    [{"params": params_low_lr, "lr": 5e-5}, {"params": params_high_lr, "lr": 1e-4}],
    weight_decay=1e-4,
)
net, opt = amp.initialize(net, opt, opt_level=opt_level)  # the guide's "add this line"

if mode == "restore":  # a new process, as the guide restores
    checkpoint = torch.load(path)
    net.load_state_dict(checkpoint["model"])  # after amp.initialize, as the guide insists
    opt.load_state_dict(checkpoint["optimizer"])
    amp.load_state_dict(checkpoint["amp"])
    same = all(
        torch.equal(a, b.cuda())
        for a, b in zip(net.state_dict().values(), checkpoint["model"].values())
    )

losses = []
for step in range(8):
    x = torch.randn(4, 3, 16, 16).cuda()
    target = (x.mean(1, keepdim=True) > 0).float()
    loss = F.binary_cross_entropy_with_logits(net.head(net.encoder(x)), target)
    if not torch.isnan(loss):
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        opt.step()
    losses.append(loss.item())

if mode == "train":
    checkpoint = {"model": net.state_dict(), "optimizer": opt.state_dict(), "amp": amp.state_dict()}
    torch.save(checkpoint, path)
    same = True
print(losses[0], losses[-1], same, next(net.parameters()).device, torch.cuda.is_available())
