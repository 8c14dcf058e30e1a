#!/usr/bin/env python3
"""Runs bench/runtime_bench with --benchmark_format=json and prints each optimizer's bandwidth
as a fraction of the same run's read-modify-write (`a += s*b`) bandwidth, per size and thread
count, with the goal of issue 3 §7 (fp32 Adam and SGD at 64M with 2 threads >= 0.9, every
other optimizer >= 0.7).

Bandwidth counts each optimizer's essential bytes (one pass over the buffers its algorithm
needs: Adam 28 B/elem, SGD with momentum 20); `passes` shows actual/essential traffic for the
optimizers that need per-tensor reductions.

  bench/runtime_ratios.py [--bench PATH] [--min-time SECONDS] [--filter REGEX] [--json FILE]
The machine is shared: numbers are noisy, so compare within one run only.
"""
import argparse
import json
import os
import re
import subprocess
import sys

GOALS_64M_2T = {"Adam": 0.9, "SGD_momentum": 0.9}
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


def run(bench, min_time, pattern):
    cmd = [bench, "--benchmark_format=json", f"--benchmark_min_time={min_time}"]
    if pattern:
        cmd.append(f"--benchmark_filter={pattern}")
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=default_bench(), help="path to runtime_bench")
    ap.add_argument("--min-time", default="0.2", help="--benchmark_min_time per benchmark (seconds)")
    ap.add_argument("--filter", default="", help="--benchmark_filter regex")
    ap.add_argument("--json", help="read this saved JSON output instead of running the benchmark")
    args = ap.parse_args()
    if args.json:
        with open(args.json) as f:
            data = json.load(f)
    else:
        if not args.bench or not os.path.exists(args.bench):
            sys.exit("runtime_ratios.py: runtime_bench not found; build it (target runtime_bench) "
                     "or pass --bench PATH")
        data = run(args.bench, args.min_time, args.filter)

    rows = {}  # (size, threads) -> {kernel: benchmark}
    for b in data.get("benchmarks", []):
        m = NAME.match(b["name"])
        if not m or b.get("run_type", "iteration") != "iteration":
            continue
        key = (int(m["size"]), int(m["threads"]))
        rows.setdefault(key, {})[m["kernel"]] = b

    misses = []
    for (size, threads) in sorted(rows):
        group = rows[(size, threads)]
        rmw = group.get("stream_rmw")
        if rmw is None:
            continue
        rmw_bw = rmw["bytes_per_second"]
        print(f"\n{size}M fp32 elements, {threads} thread(s): read-modify-write {rmw_bw / 1e9:.1f} GB/s")
        print(f"  {'kernel':28s} {'step ms':>9s} {'GB/s':>7s} {'ratio':>6s} {'passes':>6s}  goal")
        for kernel, b in group.items():
            if kernel == "stream_rmw":
                continue
            ratio = b["bytes_per_second"] / rmw_bw
            passes = b.get("actual_B_per_elem", 0) / max(b.get("B_per_elem", 1), 1)
            goal = ""
            if size == 64 and threads == 2 and not kernel.startswith("stream_"):
                need = GOALS_64M_2T.get(kernel, DEFAULT_GOAL)
                ok = ratio >= need
                goal = f">= {need:.1f} {'met' if ok else 'MISSED'}"
                if not ok:
                    misses.append((kernel, ratio, need))
            ms = b["real_time"] if b.get("time_unit") == "ms" else b["real_time"] / 1e6
            print(f"  {kernel:28s} {ms:9.2f} {b['bytes_per_second'] / 1e9:7.1f} {ratio:6.2f} {passes:6.2f}  {goal}")
    if misses:
        print("\nmissed at 64M / 2 threads: " +
              ", ".join(f"{k} {r:.2f} < {n:.1f}" for k, r, n in misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
