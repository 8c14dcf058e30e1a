"""A training script as an Ascend user runs it under ``accelerate launch --use_deepspeed``:
``import torch_npu``, then accelerate's own loop, nothing NPU-specific. A tiny LLaMA (transformers)
learns shifted token runs for 8 steps. Every rank writes one JSON object to ``result-<rank>``
in its working directory (accelerate_runs.launch reads them): its device, what accelerate
prepared, the mean loss over the ranks at each step, and (rank 0) the same training in fp32 with
torch's AdamW on both ranks' batches in one process: the reference.
"""

import json
from typing import Any, Dict, List, Tuple

import torch

import torch_npu  # noqa: F401
from accelerate import Accelerator
from transformers import LlamaConfig, LlamaForCausalLM

STEPS, BATCH, LR = 8, 4, 3e-3


def make_model() -> LlamaForCausalLM:
    torch.manual_seed(0)
    return LlamaForCausalLM(
        LlamaConfig(
            vocab_size=64,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=32,
        )
    )


def batches():
    """8 batches of 4 runs of 16 consecutive tokens: accelerate hands rank r batches r, r+2, ..."""
    starts = torch.randint(0, 48, (8 * BATCH, 1), generator=torch.Generator().manual_seed(10))
    return torch.arange(16) + starts


def reference(world: int):
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    seqs = list(batches().split(BATCH))
    rounds = len(seqs) // world  # steps per pass over the data, each of ``world`` batches
    losses = []
    for step in range(STEPS):
        first = (step % rounds) * world
        loss = sum(model(input_ids=x, labels=x).loss for x in seqs[first : first + world]) / world
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def train(acc: Accelerator, model: Any) -> Tuple[Any, List[float]]:
    """``model`` prepared by ``acc`` and trained with accelerate's own loop: the prepared model
    and the mean loss over the ranks at each step."""
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    loader = torch.utils.data.DataLoader(batches(), batch_size=BATCH, shuffle=False)
    model, opt, loader = acc.prepare(model, opt, loader)
    losses = []
    for x in (list(loader) * 2)[:STEPS]:
        loss = model(input_ids=x, labels=x).loss
        acc.backward(loss)
        opt.step()
        opt.zero_grad()
        losses.append(acc.reduce(loss.detach(), "mean").item())
    return model, losses


def report(acc: Accelerator, result: Dict[str, Any]) -> None:
    """Write this rank's ``result`` (rank 0's with the reference's losses) to its file: files,
    not stdout, where the ranks' lines could interleave."""
    if acc.is_main_process:
        result["reference"] = reference(acc.num_processes)
    with open(f"result-{acc.process_index}", "w") as f:
        json.dump(result, f)


def main() -> None:
    acc = Accelerator()
    model, losses = train(acc, make_model())
    report(
        acc,
        {
            "device": str(acc.device),
            "deepspeed": acc.state.deepspeed_plugin is not None,
            "mixed_precision": acc.mixed_precision,
            "engine": type(model).__name__,
            "param_dtype": str(next(model.parameters()).dtype),
            "losses": losses,
            "zero_stage": acc.state.deepspeed_plugin.zero_stage,
        },
    )


if __name__ == "__main__":
    main()
