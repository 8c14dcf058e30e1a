"""Launches one Python process per rank, as torchrun does: RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and a free MASTER_PORT on loopback."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RankResult:
    def __init__(self, rank: int, returncode: int, stdout: str, stderr: str) -> None:
        self.rank, self.returncode, self.stdout, self.stderr = rank, returncode, stdout, stderr

    def __repr__(self) -> str:
        return (
            f"rank {self.rank} exited {self.returncode}\n--- stdout\n{self.stdout[-3000:]}"
            f"\n--- stderr\n{self.stderr[-6000:]}"
        )


def launch(
    args: Sequence[str],
    world: int,
    env: Dict[str, str],
    per_node: Optional[int] = None,
    timeout: float = 300,
    python: Optional[str] = None,
) -> List[RankResult]:
    """Run ``python args...`` (this interpreter unless ``python`` names one) as ``world`` ranks
    (``per_node`` ranks per emulated node; all on this machine) and wait for all of them; a rank
    still running at ``timeout`` is killed."""
    per_node = per_node or world
    port = str(free_port())
    procs, outputs = [], []
    # Each rank writes to files, not pipes: a rank blocked on a full pipe while the ranks before
    # it are read would hang every other rank in its next collective.
    with contextlib.ExitStack() as files:
        for rank in range(world):
            rank_env = dict(
                env,
                RANK=str(rank),
                WORLD_SIZE=str(world),
                LOCAL_RANK=str(rank % per_node),
                LOCAL_WORLD_SIZE=str(per_node),
                GROUP_RANK=str(rank // per_node),
                MASTER_ADDR="127.0.0.1",
                MASTER_PORT=port,
                OMP_NUM_THREADS="1",
            )
            out, err = (files.enter_context(tempfile.TemporaryFile("w+")) for _ in range(2))
            outputs.append((out, err))
            procs.append(
                subprocess.Popen(
                    [python or sys.executable] + list(args),
                    env=rank_env,
                    stdout=out,
                    stderr=err,
                    text=True,
                )
            )
        deadline = time.monotonic() + timeout
        killed = False
        for proc in procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                killed = True
                for p in procs:
                    p.kill()
                proc.wait()
        results = []
        for rank, (proc, (out, err)) in enumerate(zip(procs, outputs)):
            out.seek(0)
            err.seek(0)
            text = err.read() + (f"\n(killed after {timeout} s)" if killed else "")
            results.append(RankResult(rank, proc.returncode, out.read(), text))
    return results
