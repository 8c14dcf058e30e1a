#!/usr/bin/env python3
"""One amp training step at O2 against the same step at O0 on the emulated NPU, for each model of
amp_models.py, with today's general emulation path beside the fast one
(APEXNPU_EMULATION_PATH=general / fast), all measured in the same run.

O2 is what Ascend users run, so its cost over O0 is what their CI time is made of; the goal is
O2/O0 <= 1.25. Every (model, path, level) is a process of its own (amp keeps process-wide
state) that times --amp-steps steps after 3 warm-up steps and reports the median and its losses.
A round runs all of them back to back; the table gives the median over rounds of each time and
of each round's O2/O0 (both levels measured side by side). The two paths must give the same
losses, bit for bit, at every step: the table says whether they did.

Run through bench/overlay_bench.py (which finds or builds the package), or directly:
    PYTHONPATH=<apex layout>:<torch_npu_emulator layout> python3 bench/amp_steps.py [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
GOAL = 1.25
PATHS = ("general", "fast")
LEVELS = ("O0", "O2")
WARMUP = 3


def child(model_name: str, level: str, steps: int) -> None:
    """One process: prints {"ms": median step time, "losses": every step's loss}."""
    import torch
    import torch.nn.functional as F
    from apex import amp
    from apex.optimizers import NpuFusedSGD

    sys.path.insert(0, HERE)
    import amp_models

    _, make_model, make_batch = amp_models.MODELS[model_name]
    torch.manual_seed(0)
    model = make_model().npu()
    opt = NpuFusedSGD(model.parameters(), lr=1e-3, momentum=0.9)
    kwargs = {} if level == "O0" else {"loss_scale": "dynamic", "combine_grad": True}
    model, opt = amp.initialize(model, opt, opt_level=level, verbosity=0, **kwargs)
    x, y = (t.npu() for t in make_batch(torch.Generator().manual_seed(1)))
    times: List[float] = []
    losses: List[float] = []
    for i in range(WARMUP + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(model(x).float(), y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
        torch.npu.synchronize()
        losses.append(loss.item())
        if i >= WARMUP:
            times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"ms": statistics.median(times), "losses": losses}))


def _run_child(model: str, path: str, level: str, steps: int, threads: int,
               env: Dict[str, str]) -> Dict:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", model, level,
                           "--amp-steps", str(steps), "--threads", str(threads)],
                          capture_output=True, text=True, env=dict(env, APEXNPU_EMULATION_PATH=path))
    if proc.returncode != 0:
        sys.exit(f"amp_steps: the {model} step at {level} ({path} path) failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(models: Sequence[str], rounds: int, steps: int, threads: int,
        paths: Sequence[str]) -> Dict:
    """Times every (model, path, level) in ``rounds`` rounds and prints the table; returns
    {model: {path: {"O0": ms, "O2": ms, "ratio": O2/O0}}, "identical": bool}."""
    sys.path.insert(0, HERE)
    import amp_models

    print(f"\namp: one training step on the emulated NPU, O2 against O0, NpuFusedSGD, {threads} "
          f"thread(s); median of {steps} steps per process, median of {rounds} rounds; the "
          f"general path is today's emulation (APEXNPU_EMULATION_PATH=general)")
    for name in models:
        print(f"  {name}: {amp_models.MODELS[name][0]}")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(list(paths) +
                                                      [os.environ.get("PYTHONPATH", "")]))
    found: Dict[str, Dict[str, Dict[str, List[Dict]]]] = {
        m: {p: {lv: [] for lv in LEVELS} for p in PATHS} for m in models}
    for r in range(rounds):
        order = [(p, lv) for p in PATHS for lv in LEVELS]
        for name in models:
            for path, level in (order if r % 2 == 0 else order[::-1]):
                found[name][path][level].append(
                    _run_child(name, path, level, steps, threads, env))
    print(f"{'model':<13}{'path':<9}{'O0 ms':>9}{'O2 ms':>9}{'O2/O0':>8}{'goal':>7}")
    summary: Dict = {"identical": True}
    for name in models:
        summary[name] = {}
        for path in PATHS:
            runs = found[name][path]
            o0 = statistics.median(x["ms"] for x in runs["O0"])
            o2 = statistics.median(x["ms"] for x in runs["O2"])
            # Rounded as printed, so the verdict agrees with the row a reader sees.
            ratio = round(statistics.median(b["ms"] / a["ms"]
                                            for a, b in zip(runs["O0"], runs["O2"])), 2)
            summary[name][path] = {"O0": o0, "O2": o2, "ratio": ratio}
            verdict = "met" if ratio <= GOAL else "MISSED"
            print(f"{name:<13}{path:<9}{o0:>9.1f}{o2:>9.1f}{ratio:>8.2f}{GOAL:>7.2f}  {verdict}")
        for level in LEVELS:
            losses = {json.dumps(x["losses"]) for p in PATHS for x in found[name][p][level]}
            summary["identical"] &= len(losses) == 1
    print("  losses at every step, general vs fast path: " +
          ("bit-identical" if summary["identical"] else "DIFFERENT"))
    return summary


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="cnn,transformer")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--amp-steps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--child", nargs=2, metavar=("MODEL", "LEVEL"), help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    os.environ["APEXNPU_NUM_THREADS"] = str(args.threads)
    import torch

    torch.set_num_threads(args.threads)
    if args.child:
        child(args.child[0], args.child[1], args.amp_steps)
        return
    import apex
    import torch_npu

    run(args.models.split(","), args.rounds, args.amp_steps, args.threads,
        [os.path.dirname(os.path.dirname(os.path.abspath(m.__file__))) for m in (apex, torch_npu)])


if __name__ == "__main__":
    main(sys.argv[1:])
