"""A subclass of NpuFusedBertAdam that steps the combined buffers itself, as Ascend's BERT
recipes do (Bert-Squad's ``NpuFusedBertAdamV2``): its ``_group_step`` reads amp's combined
parameters, gradients and states from ``self._amp_stash``, scales the learning rate by
``npu_fused_bert_adam.SCHEDULES`` at the progress its state's ``step`` gives, runs
``torch_npu.npu_bert_apply_adam`` into the buffers and advances that ``step``.

    python bert_group_step.py

Trains one seeded model with the subclass and one with NpuFusedBertAdam itself (O2,
combine_grad, a static loss scale; BERT's warmup_linear over 10 steps, 20% warmup) and prints
one JSON document: each run's losses and final fp32 master weights, and the learning rate
each step of the subclass used."""

import json

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_npu
from apex import amp
from apex.optimizers import NpuFusedBertAdam, npu_fused_bert_adam

STEPS, T_TOTAL, WARMUP = 8, 10, 0.2


class GroupStepBertAdam(NpuFusedBertAdam):
    used_lrs = []

    def _group_step(self, group_index):
        group = self.param_groups[group_index]
        stash = self._amp_stash
        for param, grad, state in zip(
            stash.combined_params_indexed_by_group[group_index],
            stash.combined_grads_indexed_by_group[group_index],
            stash.combined_param_states_indexed_by_group[group_index],
        ):
            if param is None or grad is None:
                continue
            schedule = npu_fused_bert_adam.SCHEDULES[group["schedule"]]
            lr = group["lr"] * schedule(state["step"] / group["t_total"], group["warmup"])
            self.used_lrs.append(lr)
            torch_npu.npu_bert_apply_adam(
                lr,
                group["b1"],
                group["b2"],
                group["e"],
                grad,
                group["max_grad_norm"],
                0,
                group["weight_decay"],
                out=(param, state["exp_avg"], state["exp_avg_sq"]),
            )
            state["step"] += 1


def train(cls):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 4)).npu()
    opt = cls(model.parameters(), lr=0.05, warmup=WARMUP, t_total=T_TOTAL, weight_decay=0.01)
    model, opt = amp.initialize(
        model, opt, opt_level="O2", loss_scale=128.0, combine_grad=True, verbosity=0
    )
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 8, generator=g).npu().half()
    y = torch.randint(0, 4, (32,), generator=g).npu()
    losses = []
    for _ in range(STEPS):
        loss = F.cross_entropy(model(x).float(), y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    masters = [p.detach().float().cpu().reshape(-1).tolist() for p in amp.master_params(opt)]
    steps = sorted({int(opt.state[p]["step"]) for p in amp.master_params(opt)})
    return {"losses": losses, "masters": masters, "steps": steps}


print(
    json.dumps(
        {
            "subclass": train(GroupStepBertAdam),
            "stock": train(NpuFusedBertAdam),
            "used_lrs": GroupStepBertAdam.used_lrs,
        }
    )
)
