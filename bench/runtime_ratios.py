#!/usr/bin/env python3
"""Runs bench/runtime_bench with --benchmark_format=json and prints each optimizer's bandwidth
as a fraction of the same run's read-modify-write (`a += s*b`) bandwidth, per size and thread
count, with the goals at 64M with 2 threads: fp32 Adam and SGD >= 0.9 of that bandwidth, LAMB
(with and without the global norm) >= 0.85, every other optimizer >= 0.7: a fused step should
cost about one pass over memory.

Bandwidth counts each optimizer's essential bytes (one pass over the buffers its algorithm
needs: Adam 28 B/elem, SGD with momentum 20); `passes` shows actual/essential traffic through
the caches for the optimizers that need per-tensor reductions (runtime_bench.cpp says how much
of it memory sees).

The machine is shared, so a single sample means little. Each size runs in its own process with
--benchmark_repetitions and random interleaving (a burst of outside load hits every kernel
alike); the ratio uses each kernel's best repetition, as STREAM reports best-of-N, and the
median ratio is printed beside it.

--baseline PATH compares with another build's runtime_bench (say, main's) in the same run: the
two programs take turns, --rounds times per size (alternating which goes first), and each
ratio is taken against its own program's read-modify-write; the baseline's ratios are printed
in the `before` columns beside the goal.

  bench/runtime_ratios.py [--bench PATH] [--baseline PATH] [--rounds N] [--min-time S]
                          [--repetitions N] [--sizes 1,16,64] [--threads 1,2]
                          [--filter REGEX] [--json FILE]
"""

import argparse
import json
import os
import re
import subprocess
import sys

GOALS_64M_2T = {"Adam": 0.9, "SGD_momentum": 0.9, "Lamb": 0.85, "NpuFusedLamb_global_norm": 0.85}
ORDER = [
    "stream_triad",
    "SGD_momentum",
    "Adam",
    "AdamW",
    "AdamP",
    "BertAdam",
    "BertAdam_clip",
    "Adadelta",
    "Lamb",
    "Lamb_16K_tensors",
    "NpuFusedLamb_global_norm",
    "RMSprop",
    "RMSpropTF",
    "Adam_fp16_master",
]
DEFAULT_GOAL = 0.7
NAME = re.compile(r"^(?P<kernel>[^/]+)/(?P<size>\d+)M/threads:(?P<threads>\d+)")


def default_bench():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    for d in ("build/optim", "build/release", "build"):
        path = os.path.join(root, d, "bench", "runtime_bench")
        if os.path.exists(path):
            return path
    return None


def run(bench, min_time, repetitions, size, pattern, threads):
    # Google Benchmark's regex dialect has no (?:...): anchor the kernel-name alternatives.
    regex = f"^({pattern})[^/]*/{size}M/" if pattern else f"/{size}M/"
    if threads:
        regex += f"threads:({threads.replace(',', '|')})(/|$)"
    cmd = [
        bench,
        "--benchmark_format=json",
        f"--benchmark_min_time={min_time}",
        f"--benchmark_repetitions={repetitions}",
        "--benchmark_enable_random_interleaving=true",
        f"--benchmark_filter={regex}",
    ]
    print(f"running {' '.join(cmd)}", file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    if not out.strip():
        sys.exit(f"runtime_ratios.py: no benchmark of {bench} matches {regex}")
    return json.loads(out)["benchmarks"]


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def ratios(benchmarks):
    """{(size, threads): {"rmw": (best GB/s, median GB/s, samples), kernel: row}} where a row
    holds the best repetition's ratio, ms and GB/s, the median ratio and the passes."""
    samples = {}  # (size, threads) -> {kernel: [benchmark, ...]}
    for b in benchmarks:
        m = NAME.match(b["name"])
        if not m or b.get("run_type", "iteration") != "iteration":
            continue
        key = (int(m["size"]), int(m["threads"]))
        samples.setdefault(key, {}).setdefault(m["kernel"], []).append(b)
    out = {}
    for key, kernels in samples.items():
        if "stream_rmw" not in kernels:
            continue
        best = {k: max(v, key=lambda b: b["bytes_per_second"]) for k, v in kernels.items()}
        med = {k: median([b["bytes_per_second"] for b in v]) for k, v in kernels.items()}
        rmw_bw, rmw_median = best["stream_rmw"]["bytes_per_second"], med["stream_rmw"]
        rows = {"rmw": (rmw_bw, rmw_median, len(kernels["stream_rmw"]))}
        for kernel, b in best.items():
            if kernel == "stream_rmw":
                continue
            rows[kernel] = {
                "ratio": b["bytes_per_second"] / rmw_bw,
                "median": med[kernel] / rmw_median,
                "ms": b["real_time"] if b.get("time_unit") == "ms" else b["real_time"] / 1e6,
                "gbps": b["bytes_per_second"] / 1e9,
                "passes": b.get("actual_B_per_elem", 0) / max(b.get("B_per_elem", 1), 1),
            }
        out[key] = rows
    return out


def report(after, before):
    misses = []
    for size, threads in sorted(after):
        group = after[(size, threads)]
        rmw_bw, rmw_median, reps = group["rmw"]
        print(
            f"\n{size}M fp32 elements, {threads} thread(s): read-modify-write {rmw_bw / 1e9:.1f} GB/s "
            f"(best of {reps}; median {rmw_median / 1e9:.1f})"
        )
        old = before.get((size, threads)) if before is not None else None
        if before is not None and old is not None:
            print(
                f"  baseline's read-modify-write {old['rmw'][0] / 1e9:.1f} GB/s (median {old['rmw'][1] / 1e9:.1f})"
            )
        header = f"  {'kernel':28s} {'step ms':>9s} {'GB/s':>7s} {'ratio':>6s} {'median':>6s} {'passes':>6s}"
        if before is not None:
            header += f" {'before':>6s} {'median':>6s}"
        print(header + "  goal")
        kernels = [k for k in group if k != "rmw"]
        kernels.sort(key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k))
        for kernel in kernels:
            r = group[kernel]
            line = (
                f"  {kernel:28s} {r['ms']:9.2f} {r['gbps']:7.1f} {r['ratio']:6.2f} "
                f"{r['median']:6.2f} {r['passes']:6.2f}"
            )
            if before is not None:
                o = old.get(kernel) if old is not None else None
                line += f" {o['ratio']:6.2f} {o['median']:6.2f}" if o else f" {'-':>6s} {'-':>6s}"
            goal = ""
            if size == 64 and threads == 2 and not kernel.startswith("stream_"):
                need = GOALS_64M_2T.get(kernel, DEFAULT_GOAL)
                ok = r["ratio"] >= need
                goal = f">= {need:.2f} {'met' if ok else 'MISSED'}"
                if not ok:
                    misses.append((kernel, r["ratio"], need))
            print(line + "  " + goal)
    if misses:
        print(
            "\nmissed at 64M / 2 threads: "
            + ", ".join(f"{k} {r:.2f} < {n:.2f}" for k, r, n in misses)
        )


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--bench", default=default_bench(), help="path to runtime_bench")
    ap.add_argument(
        "--baseline", help="another runtime_bench to compare with, run in turns with --bench"
    )
    ap.add_argument(
        "--rounds", type=int, default=3, help="turns of each program per size with --baseline"
    )
    ap.add_argument(
        "--min-time", default="0.1", help="--benchmark_min_time per repetition (seconds)"
    )
    ap.add_argument("--repetitions", type=int, default=5, help="repetitions per benchmark")
    ap.add_argument("--sizes", default="1,16,64", help="sizes in Mi elements, comma-separated")
    ap.add_argument(
        "--threads", default="", help="thread counts to run, comma-separated (default: all)"
    )
    ap.add_argument(
        "--filter",
        default="",
        help="kernel names to run, a regex of alternatives (e.g. 'Adam|stream')",
    )
    ap.add_argument(
        "--json", help="read these benchmarks (a saved JSON list or report) instead of running"
    )
    ap.add_argument("--save", help="write the raw benchmark list to this JSON file")
    args = ap.parse_args()
    pattern = args.filter
    if args.json:
        with open(args.json) as f:
            data = json.load(f)
        benchmarks = data["benchmarks"] if isinstance(data, dict) else data
        baseline = data.get("baseline") if isinstance(data, dict) else None
    else:
        for path in [args.bench] + ([args.baseline] if args.baseline else []):
            if not path or not os.path.exists(path):
                sys.exit(
                    f"runtime_ratios.py: runtime_bench not found ({path}); build it (target "
                    "runtime_bench) or pass --bench PATH"
                )
        if pattern and "stream" not in pattern:
            pattern += "|stream_rmw"  # every ratio needs it
        benchmarks, baseline = [], [] if args.baseline else None
        for size in args.sizes.split(","):
            if args.baseline is None:
                benchmarks += run(
                    args.bench, args.min_time, args.repetitions, int(size), pattern, args.threads
                )
                continue
            for turn in range(args.rounds):
                programs = [(args.baseline, baseline), (args.bench, benchmarks)]
                for path, into in programs if turn % 2 == 0 else reversed(programs):
                    into += run(
                        path, args.min_time, args.repetitions, int(size), pattern, args.threads
                    )
    if args.save:
        with open(args.save, "w") as f:
            json.dump(
                benchmarks
                if baseline is None
                else {"benchmarks": benchmarks, "baseline": baseline},
                f,
                indent=1,
            )
    report(ratios(benchmarks), None if baseline is None else ratios(baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
