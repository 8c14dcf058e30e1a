"""One rank of DeepSpeed training on emulated NPUs (run by ranks.launch, 2 ranks):
``deepspeed_worker.py CKPT_DIR DTYPE:STAGE[:SCALE_POWER][:fp64][:init] ...`` trains a small
MLP with each configuration in turn, in this one process pair, through DeepSpeed's own NPU
accelerator (it picks it because torch_npu imports), hccl and ZeRO's partitioned optimizer with
DeepSpeed's Adam for NPUs (``init``: the model made under ZeRO-3's ``zero.Init``). Each
configuration trains STEPS steps, saving the engine's checkpoint after SAVE_AT, then a second
engine, built from another initialisation, loads that checkpoint and retrains the rest. Rank 0
prints one JSON line: per configuration the mean loss over the ranks at each step, the resumed
engine's, what DeepSpeed chose (accelerator, optimizers, loss scale, skipped steps, a 910's
float status) and the fp32 reference: the same model, from the engine's initial parameters, and
data in fp32 with ``torch.optim.Adam`` on the whole batch in this process (what the ranks'
averaged gradient trains); or the error that stopped it.
"""

import json
import sys
from typing import Dict, List

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_npu  # noqa: F401 - before deepspeed, as on an NPU: DeepSpeed then picks 'npu'
import deepspeed
import deepspeed.comm as dist
from deepspeed.accelerator import get_accelerator

STEPS, SAVE_AT, BATCH, LR = 8, 4, 16, 1e-2


def make_model(seed: int) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 4))


class Recomputed(nn.Module):
    """``make_model``'s MLP with its first block under DeepSpeed's activation checkpointing,
    which recomputes it in backward after restoring the NPU's RNG state (through
    ``torch.npu._lazy_call``)."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.net = make_model(seed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Reentrant checkpointing gives the block's parameters gradients only through inputs
        # that require them (as torch's reentrant checkpoint, on any device).
        hidden = deepspeed.checkpointing.checkpoint(self.net[:3], x.detach().requires_grad_())
        return self.net[3](hidden)


def shard(rank: int) -> List[torch.Tensor]:
    """Rank ``rank``'s inputs, one per step; the label is the largest of the first 4 features."""
    g = torch.Generator().manual_seed(100 + rank)
    return [torch.randn(BATCH, 32, generator=g) for _ in range(STEPS)]


def config(dtype: str, stage: int, scale_power: int) -> Dict:
    cfg = {
        "train_micro_batch_size_per_gpu": BATCH,
        "gradient_accumulation_steps": 1,
        "optimizer": {"type": "Adam", "params": {"lr": LR}},
        "zero_optimization": {"stage": stage},
        "steps_per_print": 10**6,
        "wall_clock_breakdown": False,
    }
    if dtype == "fp16":
        cfg["fp16"] = {
            "enabled": True,
            "initial_scale_power": scale_power,
            "loss_scale_window": 1000,
        }
    else:
        cfg["bf16"] = {"enabled": True}
    return cfg


def train(engine, data, steps, dtype) -> List[float]:
    half = torch.float16 if dtype == "fp16" else torch.bfloat16
    losses = []
    for x in data[steps[0] : steps[1]]:
        y = x[:, :4].argmax(1).to(engine.device)
        loss = F.cross_entropy(engine(x.to(engine.device, half)).float(), y)
        engine.backward(loss)
        engine.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / dist.get_world_size())
    return losses


def full_params(engine) -> List[torch.Tensor]:
    """The engine's parameters as they are now, whole (ZeRO-3 gathers its partitions), in fp32
    on the host."""
    params = list(engine.module.parameters())
    with deepspeed.zero.GatheredParameters(params):
        return [p.detach().float().cpu().clone() for p in params]


def reference(world: int, initial: List[torch.Tensor]) -> List[float]:
    """fp32, one process, the whole batch, from the engine's initial parameters (DeepSpeed's
    fp32 master weights start from them): the losses ZeRO's data parallelism should give."""
    model = make_model(0)
    with torch.no_grad():
        for p, value in zip(model.parameters(), initial):
            p.copy_(value)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    shards = [shard(r) for r in range(world)]
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        per_rank = [F.cross_entropy(model(s[step]), s[step][:, :4].argmax(1)) for s in shards]
        loss = sum(per_rank) / world
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def build(seed: int, cfg: Dict, zero_init: bool) -> nn.Module:
    """The model, made under ZeRO-3's ``zero.Init`` (each parameter partitioned as it is made,
    on the NPU, as transformers makes models for ZeRO-3) when ``zero_init``."""
    if not zero_init:
        return Recomputed(seed)
    with deepspeed.zero.Init(config_dict_or_path=cfg):
        return Recomputed(seed)


def run(spec: str, ckpt_dir: str) -> Dict:
    dtype, stage, *rest = spec.split(":")
    stage, options = int(stage), set(rest)
    scale_power = next((int(x) for x in rest if x.isdigit()), 8)
    # HCCL reduces no float64 on a 910 or 910B (torch_npu refuses it), but DeepSpeed's NPU
    # accelerator keeps the default "fp64 supported", so ZeRO-3 all-reduces its gradient norm
    # in float64. Saying otherwise makes it use float32, as on MPS; stages 1 and 2 need
    # nothing, and ":fp64" leaves stage 3 as DeepSpeed has it.
    fp64 = stage != 3 or "fp64" in options
    type(get_accelerator()).is_fp64_supported = lambda self: fp64
    saturates = not torch_npu.npu.utils.is_support_inf_nan()
    cfg = config(dtype, stage, scale_power)
    data = shard(dist.get_rank())
    model = build(0, cfg, "init" in options)
    engine, _, _, _ = deepspeed.initialize(
        model=model, model_parameters=model.parameters(), config=cfg
    )
    initial = full_params(engine)
    if saturates:
        # zero.Init casts each new, uninitialised parameter to fp16 (it is filled after):
        # stale memory beyond fp16's range raises the status, as the NPU's would. Only
        # training counts here.
        torch_npu.npu.utils.clear_npu_overflow_flag()
    losses = train(engine, data, (0, SAVE_AT), dtype)
    tag = f"{dtype}-{stage}"
    engine.save_checkpoint(ckpt_dir, tag=tag)
    losses += train(engine, data, (SAVE_AT, STEPS), dtype)
    out = {
        "losses": losses,
        "accelerator": get_accelerator().device_name(),
        "device": str(engine.device),
        "zero": type(engine.optimizer).__name__,
        "basic": type(engine.basic_optimizer).__name__,
        "param_dtype": str(next(engine.module.parameters()).dtype),
        "skipped": engine.skipped_steps,
        "scale": getattr(engine.optimizer, "cur_scale", None),
        "float_status": torch_npu.npu.utils.get_npu_overflow_flag() if saturates else None,
        "reference": reference(dist.get_world_size(), initial),
    }
    fresh = build(1, cfg, "init" in options)
    other, _, _, _ = deepspeed.initialize(
        model=fresh, model_parameters=fresh.parameters(), config=cfg
    )
    path, _ = other.load_checkpoint(ckpt_dir, tag=tag)
    out["loaded"] = path is not None
    out["resumed"] = train(other, data, (SAVE_AT, STEPS), dtype)
    for e in (engine, other):
        e.destroy()
    return out


def main() -> None:
    ckpt_dir, specs = sys.argv[1], sys.argv[2:]
    deepspeed.init_distributed()
    results = {}
    for spec in specs:
        try:
            results[spec] = run(spec, ckpt_dir)
        except TypeError as e:  # hccl's refusal, raised on every rank before the collective
            results[spec] = {"error": str(e)}
    if dist.get_rank() == 0:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
