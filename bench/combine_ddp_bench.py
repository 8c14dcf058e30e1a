#!/usr/bin/env python3
"""amp's combine_ddp against torch's DistributedDataParallel, two ranks side by side on this
machine (hccl, the emulated NPU), and the ratios of their training-step times; combine_ddp runs
with its all-reduces overlapped with backward (gradient hooks) and without
(APEXNPU_COMBINE_DDP_OVERLAP=0: every slice after backward, as before the overlap).

    python3 bench/combine_ddp_bench.py [--apex-path DIR] [--width 2048] [--steps 20] [--rounds 3]

DIR is a wheel layout directory written by `apexnpu build` (it holds apex/, with apex.amp; the
torch_npu emulator's layout beside it joins it); without it, the apex that the running interpreter imports (e.g. the wheel installed in a venv).
Both routes train the same MLP (4 hidden layers of --width, batch 4 per rank, so the step is
mostly gradient traffic) at amp O1 with a static loss scale and NpuFusedSGD:
  combine_ddp             amp.initialize(..., combine_grad=True, combine_ddp=True)
  combine_ddp_no_overlap  the same, APEXNPU_COMBINE_DDP_OVERLAP=0
  torch DDP               amp.initialize(...), then the model wrapped in DistributedDataParallel
Each route runs in --rounds rounds, alternating; every round starts two fresh rank processes and
rank 0 reports the median step after warm-up. Each route keeps its fastest round's median.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROUTES = ("combine_ddp", "combine_ddp_no_overlap", "torch_ddp")


def rank_main(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F
    import torch_npu  # noqa: F401 - the NPU (Huawei's, or the emulator)
    from apex import amp
    from apex.optimizers import NpuFusedSGD

    torch.set_num_threads(1)  # two ranks share the machine
    torch.npu.set_device(f"npu:{args.rank}")
    dist.init_process_group(
        "hccl",
        init_method="file://" + args.init,
        rank=args.rank,
        world_size=2,
        timeout=datetime.timedelta(seconds=600),
    )
    torch.manual_seed(0)
    w = args.width
    model = nn.Sequential(
        *[m for _ in range(4) for m in (nn.Linear(w, w), nn.ReLU())], nn.Linear(w, 10)
    ).npu()
    opt = NpuFusedSGD(model.parameters(), lr=0.01, momentum=0.9)
    combine = args.route.startswith("combine_ddp")
    model, opt = amp.initialize(
        model,
        opt,
        opt_level="O1",
        loss_scale=128.0,
        verbosity=0,
        combine_grad=combine or None,
        combine_ddp=combine or None,
    )
    if not combine:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.rank])
    g = torch.Generator().manual_seed(args.rank)
    x = torch.randn(4, w, generator=g).npu()
    y = torch.randint(0, 10, (4,), generator=g).npu()
    times = []
    for _ in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    if args.rank == 0:
        params = sum(p.numel() for p in model.parameters())
        print(f"{statistics.median(times[args.warmup :])} {params}", flush=True)
    dist.destroy_process_group()


def run_route(args: argparse.Namespace, route: str) -> tuple:
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ)
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # both ranks run here
        if args.apex_path:
            from overlay_bench import emulator_beside  # this folder's

            env["PYTHONPATH"] = os.pathsep.join([args.apex_path, emulator_beside(args.apex_path)])
        env["APEXNPU_COMBINE_DDP_OVERLAP"] = "0" if route == "combine_ddp_no_overlap" else "1"
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--width",
            str(args.width),
            "--steps",
            str(args.steps),
            "--warmup",
            str(args.warmup),
            "--route",
            route,
            "--init",
            os.path.join(work, "init"),
        ]
        ranks = [
            subprocess.Popen(
                cmd + ["--rank", str(r)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for r in range(2)
        ]
        outs = [p.communicate(timeout=1800) for p in ranks]
        for p, (out, err) in zip(ranks, outs):
            if p.returncode != 0:
                sys.exit(f"combine_ddp_bench: a {route} rank failed:\n{err[-4000:]}")
        seconds, params = outs[0][0].split()
        return float(seconds), int(params)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apex-path", help="wheel layout directory from apexnpu build")
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--route", choices=ROUTES, help=argparse.SUPPRESS)
    ap.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--init", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rank is not None:
        rank_main(args)
        return
    if args.apex_path and not os.path.isdir(os.path.join(args.apex_path, "apex", "amp")):
        sys.exit(
            f"combine_ddp_bench: {args.apex_path} holds no apex/amp (pass the directory "
            "`apexnpu build` wrote)"
        )
    best = {route: float("inf") for route in ROUTES}
    params = 0
    for _ in range(args.rounds):
        for route in ROUTES:
            seconds, params = run_route(args, route)
            best[route] = min(best[route], seconds)
    print(
        f"2 ranks (hccl), MLP of {params / 1e6:.1f}M parameters, amp O1, NpuFusedSGD; "
        f"median step, best of {args.rounds} rounds"
    )
    for route in ROUTES:
        print(f"  {route:22s} {best[route] * 1e3:9.1f} ms")
    print(
        f"ratio no overlap / overlap: {best['combine_ddp_no_overlap'] / best['combine_ddp']:.2f} "
        "(higher: the overlap helps)"
    )
    print(
        f"ratio torch DDP / combine_ddp: {best['torch_ddp'] / best['combine_ddp']:.2f} "
        "(higher: combine_ddp faster)"
    )


if __name__ == "__main__":
    main()
