#!/usr/bin/env python3
"""Fused optimizer steps of the apexnpu package against torch's foreach optimizers, side by side
in one process, and one amp training step at O2 against O0 on the emulated NPU for a CNN and a
transformer block, on today's general emulation path and the fast one (bench/amp_steps.py; O2
is what Ascend users run, so its cost over O0 is what their CI time is made of; goal <= 1.25).

    python3 bench/overlay_bench.py [--sizes 10,50] [--steps 10] [--threads N]
                                   [--apex-path DIR | --binary build/release/src/cli/apexnpu]
                                   [--skip-amp | --skip-optimizers] [--amp-rounds 3]

Optimizers: NpuFusedAdam vs torch.optim.Adam(foreach=True), NpuFusedSGD(momentum=0.9) vs
torch.optim.SGD(momentum=0.9, foreach=True), NpuFusedLamb vs a LAMB written here with
torch._foreach_* ops (torch has none; same math as NpuFusedLamb). Parameters: 10M and 50M fp32
elements in 200 tensors of uneven sizes. Each step is timed alternately fused/torch after warm-up
steps; the table shows medians, the ratio torch/fused against the goal (Adam and LAMB >= 3x,
SGD >= 1.5x) and the largest parameter difference after the same steps. The whole table is
timed in --rounds rounds and each side keeps its faster median (the first round touches the
memory later ones reuse; the machine's load varies). glibc is told to keep freed memory, so
torch's per-step temporaries do not page-fault again on every step.

Where the package comes from:
  --apex-path DIR   a wheel layout directory written by `apexnpu build` (holds apex/); gives
                    apex.amp too, so the O2/O0 training step is timed.
  otherwise         the overlay of this checkout plus the runtime compiled with --binary; then
                    the amp part needs APEXNPU_TEST_UPSTREAM (an NVIDIA Apex repository), from
                    which a full package is built first, and is skipped with a message without it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GOALS = {"Adam": 3.0, "SGD": 1.5, "LAMB": 3.0}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,50", help="millions of parameters, comma separated")
    ap.add_argument("--tensors", type=int, default=200)
    ap.add_argument("--steps", type=int, default=10, help="timed steps of each optimizer")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2, help="rounds over the whole table; best kept")
    ap.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="threads for torch and for the runtime (APEXNPU_NUM_THREADS)",
    )
    ap.add_argument("--apex-path", help="a wheel layout directory from `apexnpu build`")
    ap.add_argument(
        "--binary",
        default=os.path.join(REPO, "build", "release", "src", "cli", "apexnpu"),
        help="the apexnpu binary that compiles the runtime (without --apex-path)",
    )
    ap.add_argument(
        "--amp-steps", type=int, default=10, help="timed pairs of O0/O2 steps per round"
    )
    ap.add_argument("--amp-rounds", type=int, default=3, help="rounds of the amp table; medians")
    ap.add_argument("--amp-models", default="cnn,transformer", help="models of bench/amp_models.py")
    ap.add_argument("--skip-amp", action="store_true", help="time the optimizers only")
    ap.add_argument("--skip-optimizers", action="store_true", help="time the amp steps only")
    return ap.parse_args(argv)


# --- where apex comes from -------------------------------------------------------------------------


def build_full_package(binary: str, upstream: str, work: str) -> str:
    """`apexnpu build` of upstream + patch + overlay; returns the layout directory."""
    out = os.path.join(work, "dist")
    proc = subprocess.run(
        [binary, "-q", "build", "--python=" + sys.executable, "--upstream", upstream, "-o", out],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"overlay_bench: apexnpu build failed ({proc.returncode}):\n{proc.stderr}")
    layouts = [
        os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d, "apex"))
    ]
    if len(layouts) != 1:
        sys.exit(f"overlay_bench: expected one wheel layout in {out}, found {layouts}")
    return layouts[0]


def emulator_beside(apex_path: str) -> str:
    """The torch_npu emulator's wheel layout that `apexnpu build` wrote beside ``apex_path``."""
    parent = os.path.dirname(os.path.abspath(apex_path))
    found = [
        os.path.join(parent, d)
        for d in os.listdir(parent)
        if d.startswith("torch_npu_emulator-") and os.path.isdir(os.path.join(parent, d))
    ]
    if len(found) != 1:
        sys.exit(
            f"overlay_bench: expected the torch_npu emulator's layout beside {apex_path}, "
            f"found {found} (build without --no-emulator)"
        )
    return found[0]


def import_overlay_with_runtime(binary: str) -> None:
    """The overlay of this checkout plus a freshly compiled apex._apexnpu on sys.path."""
    if not os.access(binary, os.X_OK):
        sys.exit(
            f"overlay_bench: no apexnpu binary at {binary} (build it with "
            f"`cmake --preset release && cmake --build --preset release`, or pass "
            f"--binary or --apex-path)"
        )
    os.environ["APEXNPU_BINARY"] = binary
    sys.path.insert(0, os.path.join(REPO, "tests", "python"))
    import overlay_support  # noqa: E402 - the tests' helper that builds the runtime

    if overlay_support.use_overlay(runtime=True) is None:
        sys.exit("overlay_bench: " + overlay_support.RUNTIME_SKIP_REASON)


# --- optimizers ------------------------------------------------------------------------------------


def tensor_sizes(total: int, count: int, seed: int = 0) -> List[int]:
    """`count` uneven sizes (factor ~10 between smallest and largest) summing to `total`."""
    import torch

    g = torch.Generator().manual_seed(seed)
    weights = torch.rand(count, generator=g, dtype=torch.float64) * 9 + 1
    sizes = [max(1, int(w)) for w in (weights / weights.sum() * total).tolist()]
    sizes[-1] += total - sum(sizes)
    return sizes


class ForeachLamb:
    """LAMB with torch._foreach_* ops, the math of NpuFusedLamb (no bias correction, weight norm
    clamped to [0, 10], trust ratio 1 where either norm is 0)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0):
        import torch

        self.params = list(params)
        self.lr, self.betas, self.eps, self.wd = lr, betas, eps, weight_decay
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]

    def step(self) -> None:
        import torch

        with torch.no_grad():
            beta1, beta2 = self.betas
            grads = [p.grad for p in self.params]
            torch._foreach_mul_(self.exp_avg, beta1)
            torch._foreach_add_(self.exp_avg, grads, alpha=1 - beta1)
            torch._foreach_mul_(self.exp_avg_sq, beta2)
            torch._foreach_addcmul_(self.exp_avg_sq, grads, grads, value=1 - beta2)
            denom = torch._foreach_sqrt(self.exp_avg_sq)
            torch._foreach_add_(denom, self.eps)
            update = torch._foreach_div(self.exp_avg, denom)
            if self.wd != 0:
                torch._foreach_add_(update, self.params, alpha=self.wd)
            w_norm = torch.stack(torch._foreach_norm(self.params)).clamp(0, 10.0)
            u_norm = torch.stack(torch._foreach_norm(update))
            trust = torch.where(
                (w_norm > 0) & (u_norm > 0), w_norm / u_norm, torch.ones_like(w_norm)
            )
            torch._foreach_mul_(update, (trust * -self.lr).tolist())
            torch._foreach_add_(self.params, update)


def optimizer_pairs() -> List[Tuple[str, Callable, Callable]]:
    import torch
    from apex.optimizers.npu_fused import NpuFusedAdam, NpuFusedLamb, NpuFusedSGD

    return [
        # No weight decay: torch 1.13's foreach Adam adds it to the gradients in place, so the
        # two would then see different gradients from the second step on.
        (
            "Adam",
            lambda ps: NpuFusedAdam(ps, lr=1e-3),
            lambda ps: torch.optim.Adam(ps, lr=1e-3, foreach=True),
        ),
        (
            "SGD",
            lambda ps: NpuFusedSGD(ps, lr=1e-2, momentum=0.9),
            lambda ps: torch.optim.SGD(ps, lr=1e-2, momentum=0.9, foreach=True),
        ),
        (
            "LAMB",
            lambda ps: NpuFusedLamb(ps, lr=1e-3, weight_decay=0.01),
            lambda ps: ForeachLamb(ps, lr=1e-3, weight_decay=0.01),
        ),
    ]


def make_params(sizes: Sequence[int], seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    params = []
    for n in sizes:
        p = torch.nn.Parameter(torch.randn(n, generator=g))
        p.grad = torch.randn(n, generator=g) * 1e-2
        params.append(p)
    return params


def time_pair(name: str, make_fused, make_torch, sizes, steps: int, warmup: int) -> Dict:
    fused_params, torch_params = make_params(sizes, 1), make_params(sizes, 1)
    fused, reference = make_fused(fused_params), make_torch(torch_params)
    fused_ms: List[float] = []
    torch_ms: List[float] = []
    for i in range(warmup + steps):
        for opt, out in ((fused, fused_ms), (reference, torch_ms)):
            t0 = time.perf_counter()
            opt.step()
            elapsed = (time.perf_counter() - t0) * 1e3
            if i >= warmup:
                out.append(elapsed)
    diff = max(
        (a.detach() - b.detach()).abs().max().item() for a, b in zip(fused_params, torch_params)
    )
    f, t = statistics.median(fused_ms), statistics.median(torch_ms)
    return {"name": name, "fused_ms": f, "torch_ms": t, "max_diff": diff}


def keep_freed_memory() -> bool:
    """Let glibc keep freed memory in the heap instead of returning it to the system.

    torch's foreach steps allocate and free temporaries of the parameters' size every step; by
    default glibc serves the large ones with fresh mmaps or trims them from the heap afterwards,
    so each step pays page faults again (on this VM first touches cost up to seconds). Keeping
    them gives the reference its best case; the fused steps allocate nothing per step.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
        return bool(libc.mallopt(m_mmap_threshold, 32 << 20)) and bool(
            libc.mallopt(m_trim_threshold, (1 << 31) - 1)
        )
    except (OSError, AttributeError):  # not glibc
        return False


def run_optimizers(args) -> None:
    kept = keep_freed_memory()
    print(
        f"optimizers: {args.tensors} fp32 tensors, median of {args.steps} steps after "
        f"{args.warmup} warm-up steps (better of {args.rounds} rounds over the whole table), "
        f"{args.threads} thread(s) for torch and the runtime"
        f"{', freed memory kept by malloc' if kept else ''}"
    )
    cases = [
        (millions, name, make_fused, make_torch)
        for millions in [float(s) for s in args.sizes.split(",")]
        for name, make_fused, make_torch in optimizer_pairs()
    ]
    # Every round times the whole table and each side keeps its faster median: a first round
    # over all sizes touches the memory the later ones reuse (on this VM a page first touched
    # can cost milliseconds), and the shared machine's load comes and goes.
    best: List[Dict] = []
    for round_index in range(args.rounds):
        for i, (millions, name, make_fused, make_torch) in enumerate(cases):
            sizes = tensor_sizes(int(millions * 1e6), args.tensors)
            r = time_pair(name, make_fused, make_torch, sizes, args.steps, args.warmup)
            if round_index == 0:
                best.append(r)
            else:
                best[i]["fused_ms"] = min(best[i]["fused_ms"], r["fused_ms"])
                best[i]["torch_ms"] = min(best[i]["torch_ms"], r["torch_ms"])
                best[i]["max_diff"] = max(best[i]["max_diff"], r["max_diff"])
    print(
        f"{'optimizer':<10}{'params':>8}{'fused ms':>11}{'torch ms':>11}{'torch/fused':>13}"
        f"{'goal':>7}  {'':<6}{'max |dp|':>10}"
    )
    for (millions, name, _, _), r in zip(cases, best):
        # The verdict is on the ratio as printed, so a row never reads "1.50x 1.5x MISSED".
        ratio = round(r["torch_ms"] / r["fused_ms"], 2)
        goal = GOALS[name]
        print(
            f"{name:<10}{millions:>7g}M{r['fused_ms']:>11.2f}{r['torch_ms']:>11.2f}"
            f"{ratio:>12.2f}x{goal:>6.1f}x  {'met' if ratio >= goal else 'MISSED':<6}"
            f"{r['max_diff']:>10.1e}",
            flush=True,
        )


def main(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    os.environ["APEXNPU_NUM_THREADS"] = str(args.threads)  # before the runtime first runs
    try:
        import torch
    except ImportError:
        sys.exit(
            f"overlay_bench: {sys.executable} has no torch (use a Python with torch, e.g. "
            f"Debian's /usr/bin/python3 with python3-torch)"
        )
    torch.set_num_threads(args.threads)

    apex_path: Optional[str] = args.apex_path
    work = tempfile.TemporaryDirectory(prefix="overlay-bench-")
    if apex_path is None and not args.skip_amp:
        upstream = os.environ.get("APEXNPU_TEST_UPSTREAM")
        if upstream:
            print(f"building the package from {upstream} ...", flush=True)
            apex_path = build_full_package(args.binary, upstream, work.name)
    if apex_path is not None:
        if not os.path.isdir(os.path.join(apex_path, "apex")):
            sys.exit(f"overlay_bench: {apex_path} holds no apex/ package")
        sys.path[:0] = [os.path.abspath(apex_path), emulator_beside(apex_path)]
    else:
        import_overlay_with_runtime(args.binary)
    import apex.npu.backend as backend

    if backend.runtime_kernels() is None:
        sys.exit(
            "overlay_bench: apex._apexnpu (the runtime) is not importable: the fused "
            "optimizers would run their torch fallback"
        )
    if not args.skip_optimizers:
        run_optimizers(args)
    if args.skip_amp:
        return
    if apex_path is None:
        print("\namp: skipped (needs apex.amp: pass --apex-path, or set APEXNPU_TEST_UPSTREAM)")
        return
    import amp_steps

    amp_steps.run(
        args.amp_models.split(","),
        args.amp_rounds,
        args.amp_steps,
        args.threads,
        [os.path.abspath(apex_path), emulator_beside(apex_path)],
    )


if __name__ == "__main__":
    main(sys.argv[1:])
