#!/usr/bin/env python3
"""One amp training step at O2 against the same step at O0 on the emulated NPU, for each model of
amp_models.py, with today's general emulation path beside the fast one
(APEXNPU_EMULATION_PATH=general / fast), all measured in the same run.

O2 is what Ascend users run, so its cost over O0 is what their CI time is made of; the goal is
O2/O0 <= 1.25. A second table (--tables amp,bf16, the default) times the same models on an
emulated 910B (APEXNPU_SOC_VERSION=Ascend910B1) with the forward under
torch.autocast("npu", dtype=torch.bfloat16) against the same step in fp32, goal bf16/fp32 <= 1.25
(no apex.amp there: autocast is how LLM recipes train in bf16).

Each (path, level) runs in a process of its own (amp keeps process-wide state), and the four
processes of a model run in lockstep on one CPU: a step of the round takes each path once, in
alternating order, and within it the path's two levels back to back (O0 then O2, then O2 first,
and so on), so each pair of steps is timed within a fraction of a second and a slowdown of the
shared machine falls on both. A turn is two steps, the second timed (the first brings the
process's memory back into the caches the others used). After 3 warm-up steps, --amp-steps
pairs are timed per path; a round does this for each model with fresh processes, and --rounds
rounds are run. The table gives the median step time of each level, the median of the pairs'
ratios over every round, the quartiles of those ratios (p25-p75: the noise between one pair and
the next) and the lowest and highest of the rounds' medians (the noise between one set of
processes and the next): a ratio over the goal in one round only is the machine's noise, a
ratio over it in every round is the emulation's cost. The two paths must give the same losses,
bit for bit, at every step: the table says whether they did. With more than one thread, a
process that has just taken its turn may still spin its idle threads during another's turn, so
the like-for-like ratio is the one at --threads 1. At --threads 1 all four processes run on one
CPU (the first this process may use): left to the scheduler they land on different cores, whose
speed differs (shared machines), and the ratio of one run then swung between 1.0 and 1.4 from
one pair of processes to the next; on one CPU it repeats within a few hundredths.

Run through bench/overlay_bench.py (which finds or builds the package), or directly:
    PYTHONPATH=<apex layout>:<torch_npu_emulator layout> python3 bench/amp_steps.py [--rounds 3]
        [--models cnn,gru,...] [--tables amp,bf16] [--paths general,fast] [--amp-steps 8]
        [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
GOAL = 1.25
PATHS = ("general", "fast")
LEVELS = ("O0", "O2")
WARMUP = 3


def child(model_name: str, level: str) -> None:
    """One level's process: says "ready", then runs two steps per "step" line on stdin and
    answers {"ms": the second one's time, "losses": both losses} on stdout, until stdin
    closes. Levels: apex's O0 and O2, and fp32 or bf16 under torch.autocast("npu") without
    apex.amp (on a 910B)."""
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
    use_amp = level in LEVELS
    if use_amp:
        kwargs = {} if level == "O0" else {"loss_scale": "dynamic", "combine_grad": True}
        model, opt = amp.initialize(model, opt, opt_level=level, verbosity=0, **kwargs)
    x, y = (t.npu() for t in make_batch(torch.Generator().manual_seed(1)))

    def step() -> float:
        opt.zero_grad()
        if use_amp:
            loss = F.cross_entropy(model(x).float(), y)
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
        else:
            with torch.autocast("npu", dtype=torch.bfloat16, enabled=level == "bf16"):
                out = model(x)
            loss = F.cross_entropy(out.float(), y)
            loss.backward()
        opt.step()
        torch.npu.synchronize()
        return loss.item()

    cpu = os.environ.get("APEXNPU_BENCH_CPU")
    if cpu is not None:
        os.sched_setaffinity(0, {int(cpu)})
    print("ready", flush=True)
    for _ in sys.stdin:
        # The other level's step has just run on this core: an untimed step brings this one's
        # memory back into the caches, as a training loop's previous step leaves it.
        losses = [step()]
        t0 = time.perf_counter()
        losses.append(step())
        ms = (time.perf_counter() - t0) * 1e3
        print(json.dumps({"ms": ms, "losses": losses}), flush=True)


class _Level:
    """A child process of one level, stepped on request."""

    def __init__(
        self, model: str, path: str, level: str, threads: int, env: Dict[str, str]
    ) -> None:
        self.what = f"the {model} step at {level} ({path} path)"
        self.errors = tempfile.TemporaryFile("w+")  # a file: a full pipe would stall the child
        self.proc = subprocess.Popen(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--child",
                model,
                level,
                "--threads",
                str(threads),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
            env=dict(env, APEXNPU_EMULATION_PATH=path),
        )

    def wait_ready(self) -> None:
        """Wait for the child's "ready" (its imports and model made)."""
        line = self._line()
        if line.strip() != "ready":
            self._fail(line)

    def _line(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            self._fail(line)
        return line

    def _fail(self, line: str) -> None:
        """End the bench with what the child printed (an unexpected line, its errors)."""
        self.proc.kill()
        self.proc.wait()
        self.errors.seek(0)
        sys.exit(f"amp_steps: {self.what} failed:\n{line}{self.errors.read()}")

    def step(self) -> Dict:
        self.proc.stdin.write("step\n")
        self.proc.stdin.flush()
        return json.loads(self._line())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()
        self.errors.close()


# A table: (name, its two levels (the ratio is the second's time over the first's), the
# environment its processes add, and its heading).
TABLES = {
    "amp": (("O0", "O2"), {}, "O2 against O0 (apex.amp, dynamic loss scale), fp16 on a 910"),
    "bf16": (
        ("fp32", "bf16"),
        {"APEXNPU_SOC_VERSION": "Ascend910B1"},
        'bf16 under torch.autocast("npu") against fp32, on a 910B',
    ),
}


def _round(
    model: str,
    steps: int,
    threads: int,
    env: Dict[str, str],
    levels: Sequence[str] = LEVELS,
    emulation_paths: Sequence[str] = PATHS,
) -> Dict[str, Dict[str, Dict[str, List[float]]]]:
    """One round: a process per (path, level), all four stepped in lockstep on one CPU. Each
    step of the round takes every path once, in alternating order, and within a path its two
    levels back to back, in alternating order too, so each pair (and each path's pairs against
    the other's) is timed within a fraction of a second. Per path and level: the times of the
    timed steps ("ms") and the loss of every step ("losses")."""
    if threads == 1 and hasattr(os, "sched_getaffinity"):
        env = dict(env, APEXNPU_BENCH_CPU=str(min(os.sched_getaffinity(0))))
    procs: Dict[Tuple[str, str], _Level] = {}
    found = {p: {lv: {"ms": [], "losses": []} for lv in levels} for p in emulation_paths}
    try:
        for path in emulation_paths:
            for level in levels:
                procs[path, level] = _Level(model, path, level, threads, env)
        for process in procs.values():  # the four start at once, on every CPU
            process.wait_ready()
        for i in range(WARMUP + steps):
            for path in emulation_paths if i % 2 == 0 else emulation_paths[::-1]:
                for level in levels if (i // 2) % 2 == 0 else levels[::-1]:
                    result = procs[path, level].step()
                    found[path][level]["losses"] += result["losses"]
                    if i >= WARMUP:
                        found[path][level]["ms"].append(result["ms"])
    finally:
        for process in procs.values():
            process.close()
    return found


def run(
    models: Sequence[str],
    rounds: int,
    steps: int,
    threads: int,
    paths: Sequence[str],
    tables: Sequence[str] = ("amp",),
    emulation_paths: Sequence[str] = PATHS,
) -> Dict:
    """Times every (table, model, emulation path, level) in ``rounds`` rounds and prints one
    table per entry of ``tables`` (``paths``: where apex and the emulator are); returns {table: {model: {path: {level: ms, ..., "ratio": r,
    "spread": (p25, p75), "rounds": [median of each round]}}, "identical": bool}}."""
    sys.path.insert(0, HERE)
    import amp_models

    unknown = [m for m in models if m not in amp_models.MODELS]
    if unknown:
        sys.exit(
            f"amp_steps: no model {', '.join(unknown)} in amp_models.py (there are "
            f"{', '.join(amp_models.MODELS)})"
        )
    print(
        f"\none training step on the emulated NPU, NpuFusedSGD, {threads} thread(s); {steps} "
        f"pairs of steps in lockstep per round and path, {rounds} rounds of fresh processes; "
        f"the general path is the reference emulation (APEXNPU_EMULATION_PATH=general)"
    )
    for name in models:
        print(f"  {name}: {amp_models.MODELS[name][0]}")
    base = dict(
        os.environ, PYTHONPATH=os.pathsep.join(list(paths) + [os.environ.get("PYTHONPATH", "")])
    )
    found: Dict[str, Dict[str, Dict[str, List[Dict]]]] = {
        t: {m: {p: [] for p in emulation_paths} for m in models} for t in tables
    }
    started = time.perf_counter()
    for _ in range(rounds):
        for table in tables:
            levels, extra, _ = TABLES[table]
            for name in models:
                one = _round(name, steps, threads, dict(base, **extra), levels, emulation_paths)
                for path in emulation_paths:
                    found[table][name][path].append(one[path])
    summary = {
        table: _print_table(table, found[table], models, emulation_paths) for table in tables
    }
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return summary


def _quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile of ``values``, linear between the nearest ranks."""
    ordered = sorted(values)
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def _print_table(
    table: str, found: Dict, models: Sequence[str], emulation_paths: Sequence[str] = PATHS
) -> Dict:
    levels, _, heading = TABLES[table]
    first, second = levels
    ratio_name = f"{second}/{first}"
    print(f"\n{heading}")
    print(
        f"{'model':<14}{'path':<9}{first + ' ms':>9}{second + ' ms':>9}{ratio_name:>10}"
        f"{'p25-p75':>12}{'rounds':>12}{'goal':>7}"
    )
    summary: Dict = {"identical": True}
    for name in models:
        summary[name] = {}
        for path in emulation_paths:
            rounds_found = found[name][path]
            a_ms = [ms for f in rounds_found for ms in f[first]["ms"]]
            b_ms = [ms for f in rounds_found for ms in f[second]["ms"]]
            a, b = statistics.median(a_ms), statistics.median(b_ms)
            ratios = [y / x for x, y in zip(a_ms, b_ms)]
            # The median of the pairs' ratios, rounded as printed so that the verdict agrees
            # with the row a reader sees; the spread of the pairs (quartiles) and the median
            # of each round (fresh processes) say whether a ratio is the machine's noise.
            ratio = round(statistics.median(ratios), 2)
            spread = (round(_quantile(ratios, 0.25), 2), round(_quantile(ratios, 0.75), 2))
            per_round = [
                round(statistics.median(y / x for x, y in zip(f[first]["ms"], f[second]["ms"])), 2)
                for f in rounds_found
            ]
            summary[name][path] = {
                first: a,
                second: b,
                "ratio": ratio,
                "spread": spread,
                "rounds": per_round,
            }
            verdict = "met" if ratio <= GOAL else "MISSED"
            quartiles = f"{spread[0]:.2f}-{spread[1]:.2f}"
            in_rounds = f"{min(per_round):.2f}-{max(per_round):.2f}"
            print(
                f"{name:<14}{path:<9}{a:>9.1f}{b:>9.1f}{ratio:>10.2f}{quartiles:>12}"
                f"{in_rounds:>12}{GOAL:>7.2f}  {verdict}"
            )
        for level in levels:
            losses = {
                json.dumps(f[level]["losses"]) for p in emulation_paths for f in found[name][p]
            }
            summary["identical"] &= len(losses) == 1
    if len(emulation_paths) < 2:
        print("  losses: one path timed (--paths), not compared with the other")
        return summary
    print(
        "  losses at every step, general vs fast path: "
        + ("bit-identical" if summary["identical"] else "DIFFERENT")
    )
    return summary


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--models", default="cnn,transformer,torch_encoder,llama,gru,lstm,gru_cell,lstm_cell"
    )
    ap.add_argument(
        "--tables",
        default="amp,bf16",
        help="amp: O2/O0 on a 910; bf16: bf16 autocast/fp32 on a 910B",
    )
    ap.add_argument(
        "--paths",
        default=",".join(PATHS),
        help="emulation paths to time: general,fast (losses compared) or one of them",
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--amp-steps", type=int, default=8)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--child", nargs=2, metavar=("MODEL", "LEVEL"), help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    os.environ["APEXNPU_NUM_THREADS"] = str(args.threads)
    import torch

    torch.set_num_threads(args.threads)
    if args.child:
        child(args.child[0], args.child[1])
        return
    import apex
    import torch_npu

    tables = args.tables.split(",")
    for table in tables:
        if table not in TABLES:
            sys.exit(f"amp_steps: --tables {table!r} is not one of {', '.join(TABLES)}")
    emulation_paths = args.paths.split(",")
    for path in emulation_paths:
        if path not in PATHS:
            sys.exit(f"amp_steps: --paths {path!r} is not one of {', '.join(PATHS)}")
    run(
        args.models.split(","),
        args.rounds,
        args.amp_steps,
        args.threads,
        [os.path.dirname(os.path.dirname(os.path.abspath(m.__file__))) for m in (apex, torch_npu)],
        tables,
        emulation_paths,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
