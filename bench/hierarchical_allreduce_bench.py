#!/usr/bin/env python3
"""Bytes that cross between nodes: torch DDP's flat ring all-reduce against the hierarchical
all-reduce (APEXNPU_HIERARCHICAL_ALLREDUCE=1: reduce in the node, all-reduce among the node
leaders, broadcast in the node), alone and with fp16 compression, on 2 nodes x 2 processes.

    python3 bench/hierarchical_allreduce_bench.py [--width 256] [--steps 3] [--nodes 2]
                                                  [--per-node 2]

The nodes are two torchrun launches (--nnodes=2, --node_rank=0 and 1) on this machine, on the
emulated NPU over hccl. The bytes are counted where they cross: the flat run's all-reduces go
through a counted world group (torch's allreduce_hook over apex.npu.ddp.comm_hooks.flat_world()),
the hierarchical run counts its inter-node (leaders') group; each counts what a ring all-reduce
sends from a member to a member on another node (apex.npu.ddp.counted_group). Printed: the job's
bytes per step of each route, its ratio to the flat ring's, and how far the hierarchical run's
parameters are from the flat run's (fp32 sums in another order).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ROUTES = {
    "flat ring": {},
    "hierarchical": {"APEXNPU_HIERARCHICAL_ALLREDUCE": "1"},
    "hierarchical+fp16": {"APEXNPU_HIERARCHICAL_ALLREDUCE": "1", "APEXNPU_FP16_COMPRESSION": "1"},
}


def rank_main(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch_npu  # noqa: F401
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    from apex.npu.ddp import comm_hooks, counted_group

    torch.set_num_threads(1)
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.npu.set_device(f"npu:{local_rank}")
    dist.init_process_group("hccl")
    torch.manual_seed(0)
    w = args.width
    model = nn.Sequential(
        nn.Linear(w, w), nn.ReLU(), nn.Linear(w, w), nn.ReLU(), nn.Linear(w, 10)
    ).npu()
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    if args.route == "flat ring":  # DDP's own all-reduce, through a counted world group
        ddp.register_comm_hook(comm_hooks.flat_world(), default_hooks.allreduce_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rank = dist.get_rank()
    g = torch.Generator().manual_seed(rank)
    for _ in range(args.steps):
        x, y = torch.randn(8, w, generator=g).npu(), torch.randint(0, 10, (8,), generator=g).npu()
        opt.zero_grad()
        nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
    params = torch.cat([p.detach().cpu().reshape(-1) for p in model.parameters()])
    torch.save(
        {"bytes": counted_group.internode_bytes(), "params": params},
        os.path.join(args.out, f"rank{rank}.pt"),
    )
    dist.barrier()
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_route(args: argparse.Namespace, route: str, out: str) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    for name in (
        "APEXNPU_HIERARCHICAL_ALLREDUCE",
        "APEXNPU_FP16_COMPRESSION",
        "APEXNPU_POWERSGD_COMPRESSION",
    ):
        env.pop(name, None)
    env.update(ROUTES[route])
    path = [os.path.join(REPO, "src"), os.path.join(REPO, "patches", "overlay")]
    env["PYTHONPATH"] = os.pathsep.join(path + [env.get("PYTHONPATH", "")])
    port = str(free_port())
    nodes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "torch.distributed.run",
                f"--nnodes={args.nodes}",
                f"--nproc_per_node={args.per_node}",
                f"--node_rank={node}",
                "--master_addr=127.0.0.1",
                f"--master_port={port}",
                f"--log_dir={os.path.join(out, f'node{node}')}",
                # torch 1.13's Std.from_str cannot parse "0" under Python 3.11 (its enum no longer
                # iterates the zero flag): stderr to a file and the console, stdout to the console.
                "--redirects=2",
                "--tee=2",
                os.path.abspath(__file__),
                "--rank",
                "--route",
                route,
                "--out",
                out,
                "--width",
                str(args.width),
                "--steps",
                str(args.steps),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for node in range(args.nodes)
    ]
    for node, proc in enumerate(nodes):
        log = proc.communicate(timeout=900)[0]
        if proc.returncode != 0:
            sys.exit(f"{route}: node {node} failed ({proc.returncode}):\n{log[-4000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--per-node", type=int, default=2)
    parser.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--route", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rank:
        rank_main(args)
        return
    import torch

    world = args.nodes * args.per_node
    results = {}
    with tempfile.TemporaryDirectory() as work:
        for route in ROUTES:
            out = os.path.join(work, route.replace(" ", "_").replace("+", "_"))
            os.mkdir(out)
            run_route(args, route, out)
            results[route] = [torch.load(os.path.join(out, f"rank{r}.pt")) for r in range(world)]
    flat = sum(r["bytes"] for r in results["flat ring"]) / args.steps
    print(
        f"{args.nodes} nodes x {args.per_node} processes, MLP width {args.width}, "
        f"{args.steps} steps: bytes sent between nodes per step"
    )
    print(f"{'route':<20} {'bytes/step':>12} {'flat / route':>13}")
    for route, ranks in results.items():
        per_step = sum(r["bytes"] for r in ranks) / args.steps
        print(f"{route:<20} {per_step:>12.0f} {flat / per_step:>12.2f}x")
    diff = float(
        (results["hierarchical"][0]["params"] - results["flat ring"][0]["params"]).abs().max()
    )
    print(f"max |hierarchical - flat| parameter difference: {diff:.3e}")


if __name__ == "__main__":
    main()
