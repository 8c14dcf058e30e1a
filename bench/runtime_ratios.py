#!/usr/bin/env python3
"""Runs bench/runtime_bench with --benchmark_format=json and prints each optimizer's bandwidth
as a fraction of the same run's read-modify-write (`a += s*b`) bandwidth, per size and thread
count, with the goals (fp32 Adam and SGD at 64M with 2 threads >= 0.9 of that bandwidth, every
other optimizer >= 0.7: a fused step should cost about one pass over memory).

Bandwidth counts each optimizer's essential bytes (one pass over the buffers its algorithm
needs: Adam 28 B/elem, SGD with momentum 20); `passes` shows actual/essential traffic for the
optimizers that need per-tensor reductions.

The machine is shared, so a single sample means little. Each size runs in its own process with
--benchmark_repetitions and random interleaving (a burst of outside load hits every kernel
alike); the ratio uses each kernel's best repetition, as STREAM reports best-of-N, and the
median ratio is printed beside it.

  bench/runtime_ratios.py [--bench PATH] [--min-time S] [--repetitions N] [--sizes 1,16,64]
                          [--filter REGEX] [--json FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys

GOALS_64M_2T = {"Adam": 0.9, "SGD_momentum": 0.9}
ORDER = ["stream_triad", "SGD_momentum", "Adam", "AdamW", "AdamP", "BertAdam", "BertAdam_clip",
         "Adadelta", "Lamb", "Lamb_16K_tensors", "NpuFusedLamb_global_norm", "RMSprop", "RMSpropTF", "Adam_fp16_master"]
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


def run(bench, min_time, repetitions, size, pattern):
    # Google Benchmark's regex dialect has no (?:...): anchor the kernel-name alternatives.
    regex = f"^({pattern})[^/]*/{size}M/" if pattern else f"/{size}M/"
    cmd = [bench, "--benchmark_format=json", f"--benchmark_min_time={min_time}",
           f"--benchmark_repetitions={repetitions}", "--benchmark_enable_random_interleaving=true",
           f"--benchmark_filter={regex}"]
    print(f"running {' '.join(cmd)}", file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)["benchmarks"]


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=default_bench(), help="path to runtime_bench")
    ap.add_argument("--min-time", default="0.1", help="--benchmark_min_time per repetition (seconds)")
    ap.add_argument("--repetitions", type=int, default=5, help="repetitions per benchmark")
    ap.add_argument("--sizes", default="1,16,64", help="sizes in Mi elements, comma-separated")
    ap.add_argument("--filter", default="", help="kernel names to run, a regex of alternatives (e.g. 'Adam|stream')")
    ap.add_argument("--json", help="read these benchmarks (a saved JSON list or report) instead of running")
    ap.add_argument("--save", help="write the raw benchmark list to this JSON file")
    args = ap.parse_args()
    if args.json:
        with open(args.json) as f:
            data = json.load(f)
        benchmarks = data["benchmarks"] if isinstance(data, dict) else data
    else:
        if not args.bench or not os.path.exists(args.bench):
            sys.exit("runtime_ratios.py: runtime_bench not found; build it (target runtime_bench) "
                     "or pass --bench PATH")
        benchmarks = []
        for size in args.sizes.split(","):
            benchmarks += run(args.bench, args.min_time, args.repetitions, int(size), args.filter)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(benchmarks, f, indent=1)

    samples = {}  # (size, threads) -> {kernel: [benchmark, ...]}
    for b in benchmarks:
        m = NAME.match(b["name"])
        if not m or b.get("run_type", "iteration") != "iteration":
            continue
        key = (int(m["size"]), int(m["threads"]))
        samples.setdefault(key, {}).setdefault(m["kernel"], []).append(b)
    # Best repetition per kernel (highest bandwidth), plus the median bandwidth.
    rows = {}
    medians = {}
    for key, kernels in samples.items():
        rows[key] = {k: max(v, key=lambda b: b["bytes_per_second"]) for k, v in kernels.items()}
        medians[key] = {k: median([b["bytes_per_second"] for b in v]) for k, v in kernels.items()}

    misses = []
    for (size, threads) in sorted(rows):
        group = rows[(size, threads)]
        rmw = group.get("stream_rmw")
        if rmw is None:
            continue
        rmw_bw = rmw["bytes_per_second"]
        rmw_median = medians[(size, threads)]["stream_rmw"]
        reps = len(samples[(size, threads)]["stream_rmw"])
        print(f"\n{size}M fp32 elements, {threads} thread(s): read-modify-write {rmw_bw / 1e9:.1f} GB/s "
              f"(best of {reps}; median {rmw_median / 1e9:.1f})")
        print(f"  {'kernel':28s} {'step ms':>9s} {'GB/s':>7s} {'ratio':>6s} {'median':>6s} {'passes':>6s}  goal")
        ordered = sorted(group.items(), key=lambda kv: (ORDER.index(kv[0]) if kv[0] in ORDER else len(ORDER), kv[0]))
        for kernel, b in ordered:
            if kernel == "stream_rmw":
                continue
            ratio = b["bytes_per_second"] / rmw_bw
            ratio_median = medians[(size, threads)][kernel] / rmw_median
            passes = b.get("actual_B_per_elem", 0) / max(b.get("B_per_elem", 1), 1)
            goal = ""
            if size == 64 and threads == 2 and not kernel.startswith("stream_"):
                need = GOALS_64M_2T.get(kernel, DEFAULT_GOAL)
                ok = ratio >= need
                goal = f">= {need:.1f} {'met' if ok else 'MISSED'}"
                if not ok:
                    misses.append((kernel, ratio, need))
            ms = b["real_time"] if b.get("time_unit") == "ms" else b["real_time"] / 1e6
            print(f"  {kernel:28s} {ms:9.2f} {b['bytes_per_second'] / 1e9:7.1f} {ratio:6.2f} "
                  f"{ratio_median:6.2f} {passes:6.2f}  {goal}")
    if misses:
        print("\nmissed at 64M / 2 threads: " +
              ", ".join(f"{k} {r:.2f} < {n:.1f}" for k, r, n in misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
