"""One rank of small FSDP training runs on emulated NPUs over hccl (run by ranks.launch):
``fsdp_worker.py PHASES TMPDIR``, PHASES a comma-separated list of:

- ``full_shard``, ``shard_grad_op``: FSDP1 (``FullyShardedDataParallel``, ``device_id`` an NPU,
  ``sync_module_states=True`` over ranks built with different seeds, each Linear its own unit)
  in fp32 with that sharding strategy;
- ``fp16``: FULL_SHARD with ``MixedPrecision`` in fp16 and the ShardedGradScaler that
  ``torch.distributed.fsdp.sharded_grad_scaler`` names, rank 1's gradients overflowing at two
  steps (``SKIPPED``); ``fp16_offload`` the same with the parameters and gradients offloaded
  to the host (``CPUOffload``, ``use_orig_params=True``);
- ``bf16``: FULL_SHARD with ``MixedPrecision`` in bf16 (a 910B's);
- ``state_dict``: a trained FULL_SHARD model's sharded and full state dicts saved with torch.save
  and loaded into fresh FSDP models and, the full one, into a plain module; the sharded one
  also through ``torch.distributed.checkpoint``;
- ``fsdp2``, ``fsdp2_bf16``, ``fsdp2_fp16``: torch 2.x's ``fully_shard`` on
  ``init_device_mesh("npu", ...)``, in fp32 or with a bf16 or fp16 ``MixedPrecisionPolicy``
  (reducing in fp32), fp16 with the ShardedGradScaler and the overflows of ``fp16``.

The reference is the same model trained in fp32 by one process on both ranks' batches at once
(what averaging the ranks' gradients computes), skipping the steps the scaler skips. Every rank
writes one JSON line per phase to TMPDIR/rank<N>.jsonl."""

# ruff: noqa: E402  (imports placed after setup code)
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import torch_npu  # noqa: F401

from torch.distributed.fsdp import FullyShardedDataParallel as FSDP  # noqa: E402
from torch.distributed.fsdp import (
    CPUOffload,
    FullStateDictConfig,
    MixedPrecision,
    ShardingStrategy,
    StateDictType,
)
from torch.distributed.fsdp.wrap import ModuleWrapPolicy  # noqa: E402

# At OVERFLOW_STEP rank 1's scaled loss overflows fp16 in the backward pass; at POISON_STEP an
# inf lands in rank 1's own gradient shard only, after the gradients were reduced, so that
# only rank 1 can see it and rank 0 skips the step on its word alone.
STEPS, OVERFLOW_STEP, POISON_STEP, LR = 5, 2, 4, 0.1
SKIPPED = {OVERFLOW_STEP, POISON_STEP}
phases, tmpdir = sys.argv[1].split(","), sys.argv[2]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.npu.set_device(f"npu:{rank}")
dist.init_process_group("hccl")
device = torch.device("npu", rank)


def build(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))


def batch(step, r):
    g = torch.Generator().manual_seed(1000 * step + r)
    x = torch.randn(8, 16, generator=g)
    return x, x[:, :4].argmax(1)  # learnable: the largest of 4 features


def reference(skip=()):
    """fp32 losses and final parameters of one process training on every rank's batch."""
    model = build(0).npu()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    losses = []
    for step in range(STEPS):
        xs, ys = zip(*(batch(step, r) for r in range(world)))
        opt.zero_grad()
        loss = F.cross_entropy(model(torch.cat(xs).npu()), torch.cat(ys).npu())
        loss.backward()
        if step not in skip:
            opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().flatten().tolist() for p in model.parameters()]


def fsdp1(strategy, mixed=None, **options):
    return FSDP(
        build(rank),
        device_id=device,
        sync_module_states=True,
        sharding_strategy=strategy,
        mixed_precision=mixed,
        auto_wrap_policy=ModuleWrapPolicy({nn.Linear}),
        **options,
    )


def full_params(model):
    """Every rank's copy of the whole model's parameters, gathered (FSDP1 or FSDP2)."""
    if isinstance(model, FSDP):
        with FSDP.state_dict_type(
            model,
            StateDictType.FULL_STATE_DICT,
            FullStateDictConfig(offload_to_cpu=True, rank0_only=False),
        ):
            state = model.state_dict()
        names = [n for n, _ in build(0).named_parameters()]
        return [state[n].float().flatten().tolist() for n in names]
    return [p.full_tensor().detach().float().cpu().flatten().tolist() for p in model.parameters()]


def mean_over_ranks(values):
    t = torch.tensor(values, device=device)
    dist.all_reduce(t)
    return (t / world).tolist()


def train(model, scaler=None):
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    losses, scales, stepped = [], [], []
    for step in range(STEPS):
        x, y = batch(step, rank)
        opt.zero_grad()
        # (before the forward: FSDP2 leaves some parameters unsharded until the backward)
        before = [p.detach().clone() for p in model.parameters()]
        out = model(x.npu())
        loss = F.cross_entropy(out.float(), y.npu())
        losses.append(loss.item())
        if scaler is None:
            loss.backward()
            opt.step()
            continue
        blow_up = 1e4 if rank == 1 and step == OVERFLOW_STEP else 1.0
        scaler.scale(loss * blow_up).backward()
        if rank == 1 and step == POISON_STEP:
            with torch.no_grad():
                grads = [
                    p.grad.to_local() if hasattr(p.grad, "to_local") else p.grad
                    for p in model.parameters()
                    if p.grad is not None
                ]
                next(g for g in grads if g.numel()).view(-1)[0] = float("inf")
        scaler.step(opt)
        stepped.append(
            any(not torch.equal(a, p.detach()) for a, p in zip(before, model.parameters()))
        )
        scaler.update()
        scales.append(scaler.get_scale())
    return {
        "losses": mean_over_ranks(losses),
        "scales": scales,
        "stepped": stepped,
        "dtype": str(out.dtype),
    }


def report(phase, **fields):
    # To a file: a rank blocked on a full stdout pipe would stall the others in a collective.
    with open(os.path.join(tmpdir, f"rank{rank}.jsonl"), "a") as out:
        out.write(json.dumps(dict(phase=phase, rank=rank, **fields)) + "\n")


def state_dict_round_trip():
    model = fsdp1(ShardingStrategy.FULL_SHARD)
    train(model)
    probe = torch.randn(4, 16, generator=torch.Generator().manual_seed(7)).npu()
    want = model(probe).detach().cpu()
    sharded_path = os.path.join(tmpdir, f"sharded_{rank}.pt")
    full_path = os.path.join(tmpdir, "full.pt")
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        torch.save(model.state_dict(), sharded_path)
    with FSDP.state_dict_type(
        model,
        StateDictType.FULL_STATE_DICT,
        FullStateDictConfig(offload_to_cpu=True, rank0_only=True),
    ):
        full = model.state_dict()
    if rank == 0:
        torch.save(full, full_path)
    dist.barrier()
    fresh = FSDP(build(50 + rank), device_id=device, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    with FSDP.state_dict_type(fresh, StateDictType.SHARDED_STATE_DICT):
        fresh.load_state_dict(torch.load(sharded_path, weights_only=False))
    from_sharded = fresh(probe).detach().cpu()
    other = FSDP(build(60 + rank), device_id=device, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    with FSDP.state_dict_type(
        other, StateDictType.FULL_STATE_DICT, FullStateDictConfig(rank0_only=False)
    ):
        other.load_state_dict(torch.load(full_path))
    from_full = other(probe).detach().cpu()
    plain = build(70).npu()
    plain.load_state_dict(torch.load(full_path, map_location=device))
    from_plain = plain(probe).detach().cpu()
    # torch.distributed.checkpoint, as accelerate saves sharded state dicts
    import torch.distributed.checkpoint as dcp

    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        dcp.save({"model": model.state_dict()}, checkpoint_id=os.path.join(tmpdir, "dcp"))
    again = FSDP(build(80 + rank), device_id=device, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    with FSDP.state_dict_type(again, StateDictType.SHARDED_STATE_DICT):
        state = {"model": again.state_dict()}
        dcp.load(state, checkpoint_id=os.path.join(tmpdir, "dcp"))
        again.load_state_dict(state["model"])
    from_dcp = again(probe).detach().cpu()
    report(
        "state_dict",
        keys=sorted(full) if rank == 0 else [],
        sharded_types=sorted(
            {type(v).__name__ for v in torch.load(sharded_path, weights_only=False).values()}
        ),
        sharded=(from_sharded - want).abs().max().item(),
        full=(from_full - want).abs().max().item(),
        plain=(from_plain - want).abs().max().item(),
        dcp=(from_dcp - want).abs().max().item(),
    )


def fsdp2(mixed=None, scaler=None):
    from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    mesh = init_device_mesh("npu", (world,))
    direct = DeviceMesh("npu", list(range(world)))
    policy = (
        MixedPrecisionPolicy()
        if mixed is None
        else MixedPrecisionPolicy(param_dtype=mixed, reduce_dtype=torch.float32)
    )
    model = build(0)
    for module in model:
        if isinstance(module, nn.Linear):
            fully_shard(module, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    first = next(model.parameters())
    result = train(model, scaler)
    return dict(
        result,
        mesh=[str(mesh.device_type), str(direct.device_type)],
        scaler=type(scaler).__module__ if scaler else None,
        param_type=type(first).__name__,
        param_device=str(first.device),
        local_device=str(first.to_local().device),
        local_shape=list(first.to_local().shape),
        params=full_params(model),
    )


losses, params = reference()
report("reference", losses=losses, params=params)
if {"fp16", "fp16_offload", "fsdp2_fp16"} & set(phases):
    losses, params = reference(skip=SKIPPED)
    report("reference_skipping", losses=losses, params=params)
for phase in phases:
    if phase in ("full_shard", "shard_grad_op"):
        strategy = getattr(ShardingStrategy, phase.upper())
        model = fsdp1(strategy)
        result = train(model)
        report(
            phase,
            params=full_params(model),
            flat_shapes=[list(p.shape) for p in model.parameters()],
            **result,
        )
    elif phase in ("fp16", "bf16", "fp16_offload"):
        dtype = torch.bfloat16 if phase == "bf16" else torch.float16
        options = {}
        if phase == "fp16_offload":
            options = dict(cpu_offload=CPUOffload(offload_params=True), use_orig_params=True)
        model = fsdp1(ShardingStrategy.FULL_SHARD, MixedPrecision(dtype, dtype, dtype), **options)
        scaler = None
        if phase != "bf16":
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler = ShardedGradScaler()
        result = train(model, scaler)
        report(
            phase,
            scaler=type(scaler).__module__ if scaler else None,
            grad_devices=sorted(
                {str(p.grad.device) for p in model.parameters() if p.grad is not None}
            ),
            params=full_params(model),
            **result,
        )
    elif phase == "state_dict":
        state_dict_round_trip()
    elif phase in ("fsdp2", "fsdp2_bf16"):
        report(phase, **fsdp2(torch.bfloat16 if phase == "fsdp2_bf16" else None))
    elif phase == "fsdp2_fp16":
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        report(phase, **fsdp2(torch.float16, ShardedGradScaler()))
    else:
        raise SystemExit(f"fsdp_worker.py: unknown phase {phase!r}")
dist.destroy_process_group()
