"""One rank of a training run of the BERT-style or LLaMA-style model of npu_models.py under
apex.amp on the emulated NPU (run with the installed wheels' python).

    python npu_model_worker.py OUT MODEL OPT_LEVEL OPTIMIZER STEPS

MODEL is bert (DropoutWithByteMask on, NpuFusedBertAdam) or llama (NpuFusedAdamW); OPT_LEVEL
O0 (fp32, no combining) or O2 (fp16 model, fp32 master weights, combine_grad; with two ranks
combine_ddp, Ascend's fused data parallel over hccl); OPTIMIZER apex (apex.optimizers) or
torch_npu (torch_npu.optim). RANK and WORLD_SIZE come from the launcher (one rank: no process
group). Each rank takes its share of a fixed global batch and writes OUT/rank<R>.pt: each step's
loss on its share, the final parameters and the loss scales.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torch_npu  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from overlay_support import npu_models  # noqa: E402

BERT_BATCH, LLAMA_BATCH = 8, 4


def make_optimizer(model_name, source, params):
    if source == "apex":
        from apex.optimizers import NpuFusedAdamW, NpuFusedBertAdam
    else:
        from torch_npu.optim import NpuFusedAdamW, NpuFusedBertAdam
    if model_name == "bert":
        return NpuFusedBertAdam(params, lr=5e-3, warmup=0.1, t_total=40, max_grad_norm=-1)
    return NpuFusedAdamW(params, lr=5e-3, weight_decay=1e-2)


def bert_data(rank, world):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 50, (BERT_BATCH, 8), generator=g)
    attention = torch.ones(BERT_BATCH, 8, dtype=torch.long)
    attention[1::3, 6:] = 0
    labels = torch.randint(0, 3, (BERT_BATCH,), generator=g)
    share = BERT_BATCH // world
    part = slice(rank * share, (rank + 1) * share)
    return ids[part].npu(), attention[part].npu(), labels[part].npu()


def llama_data(rank, world, dtype):
    cos, sin = npu_models.rope_tables(8, 8)
    causal = torch.ones(8, 8, dtype=torch.bool).triu(1)
    x = npu_models.randn(LLAMA_BATCH, 8, 32, seed=3)
    target = npu_models.randn(LLAMA_BATCH, 8, 32, seed=9)
    share = LLAMA_BATCH // world
    part = slice(rank * share, (rank + 1) * share)
    return (
        x[part].to(dtype).npu(),
        cos.to(dtype).npu(),
        sin.to(dtype).npu(),
        causal.npu(),
        target[part].npu(),
    )


def main(out, model_name, opt_level, source, steps):
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    torch.npu.set_device(f"npu:{rank}")
    if world > 1:
        dist.init_process_group("hccl", init_method="env://")
    torch.manual_seed(0)
    model = (
        (npu_models.BertClassifier(p=0.1) if model_name == "bert" else npu_models.LlamaBlock())
        .npu()
        .train()
    )
    opt = make_optimizer(model_name, source, model.parameters())
    from apex import amp

    fp16 = opt_level == "O2"
    model, opt = amp.initialize(
        model,
        opt,
        opt_level=opt_level,
        verbosity=0,
        loss_scale="dynamic" if fp16 else None,
        dynamic_init_scale=2.0**10,
        combine_grad=True if fp16 else None,
        combine_ddp=True if fp16 and world > 1 else None,
    )
    dtype = torch.float16 if fp16 else torch.float32
    torch.manual_seed(1 + rank)  # dropout masks: each rank its own, the same at O0 and O2
    losses, scales = [], []
    for _ in range(steps):
        opt.zero_grad()
        if model_name == "bert":
            ids, attention, labels = bert_data(rank, world)
            loss = F.cross_entropy(model(ids, attention).float(), labels)
        else:
            x, cos, sin, causal, target = llama_data(rank, world, dtype)
            loss = F.mse_loss(model(x, cos, sin, causal).float(), target)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
        losses.append(loss.item())
        scales.append(amp.state_dict()["loss_scaler0"]["loss_scale"])
    params = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save(
        {"losses": losses, "params": params, "scales": scales}, os.path.join(out, f"rank{rank}.pt")
    )
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], a[3], int(a[4]))
