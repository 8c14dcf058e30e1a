#!/usr/bin/env python3
"""One training step of a small LLaMA-style model under ``torch.autocast("npu", float16)``
against the same step in fp32 on the emulated NPU, measured side by side in one run.

Ascend's LLM recipes train under NPU autocast with a GradScaler; on the emulator each fp16
operation runs in fp32 and is rounded back with the NPU's saturation, and autocast's policy
is applied from Python, so the fp16 step costs more than the fp32 one. The goal is a ratio of
at most 1.25. Both steps run in this process, one after the other in alternating order (fp32
then fp16, then fp16 then fp32, ...), pinned to one CPU with one thread, so a slowdown of the
shared machine falls on both; each pair gives one ratio, and the table shows the medians.
A step is forward, loss, backward and AdamW's step (through ``torch.npu.amp.GradScaler`` under
autocast). ``--profile`` prints where the fp16 step's time goes (cProfile, by own time).

Needs transformers (the torch 2.x venv of scripts/torch2_venv.sh has it):
    PYTHONPATH=src build/venv-torch2/bin/python bench/autocast_llama_step.py [--pairs 10]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import time
from typing import Callable, List

GOAL = 1.25


def make_step(amp: bool, args: argparse.Namespace) -> Callable[[], float]:
    """A closure running one training step of a fresh model (fp32, or fp16 autocast with a
    GradScaler); returns the loss."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.hidden * 8 // 3,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.heads // 2,
        max_position_embeddings=args.seq,
        use_cache=False,
    )
    model = LlamaForCausalLM._from_config(config, attn_implementation=args.attention).npu()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.npu.amp.GradScaler() if amp else None
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq), generator=g).npu()

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        if amp:
            with torch.autocast("npu", dtype=torch.float16):
                loss = model(input_ids=tokens, labels=tokens).loss
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss = model(input_ids=tokens, labels=tokens).loss
            loss.backward()
            opt.step()
        return float(loss.detach())

    return step


def timed(step: Callable[[], float]) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10, help="timed pairs of steps")
    parser.add_argument("--warmup", type=int, default=2, help="untimed pairs first")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument(
        "--attention", default="sdpa", choices=("eager", "sdpa", "flash_attention_2")
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also profile a few fp16 steps and print the top functions",
    )
    args = parser.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import torch
    import torch_npu  # noqa: F401

    torch.set_num_threads(1)
    fp32, fp16 = make_step(False, args), make_step(True, args)
    for _ in range(args.warmup):
        fp32()
        fp16()
    times32: List[float] = []
    times16: List[float] = []
    for i in range(args.pairs):
        if i % 2 == 0:
            times32.append(timed(fp32))
            times16.append(timed(fp16))
        else:
            times16.append(timed(fp16))
            times32.append(timed(fp32))
    ratios = [b / a for a, b in zip(times32, times16)]
    print(
        f"torch {torch.__version__}, LLaMA-style: hidden {args.hidden}, {args.layers} layers, "
        f"{args.heads} heads, seq {args.seq}, batch {args.batch}, {args.attention}"
    )
    print(f"fp32 step          {statistics.median(times32) * 1e3:9.1f} ms (median of {args.pairs})")
    print(f"fp16 autocast step {statistics.median(times16) * 1e3:9.1f} ms")
    ratio = statistics.median(ratios)
    print(
        f"fp16/fp32          {ratio:9.2f}  (pairs: {min(ratios):.2f}..{max(ratios):.2f}; "
        f"goal <= {GOAL}: {'met' if ratio <= GOAL else 'not met'})"
    )
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(3):
            fp16()
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
