"""bench/hierarchical_allreduce_bench.py runs end to end (two torchrun launches of two processes
each, tiny model) and prints the inter-node bytes of each route with its ratio to the flat
ring. The bytes are counted, not timed, so the ratios are exact: a ring of the 2 leaders sends
1 buffer per leader across, the flat ring of 4 sends 1.5 from each of the 2 ranks whose
successor is on the other node (3 : 2), and fp16 halves the leaders' buffer (3 : 1)."""

import os
import re
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(REPO, "bench", "hierarchical_allreduce_bench.py")


def test_the_bench_prints_the_flat_to_hierarchical_ratio():
    proc = subprocess.run(
        [sys.executable, BENCH, "--width", "32", "--steps", "2"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = dict(
        (name.strip(), (float(per_step), ratio))
        for name, per_step, ratio in re.findall(
            r"^(flat ring|hierarchical\+fp16|hierarchical)\s+(\d+)\s+([\d.]+)x$", proc.stdout, re.M
        )
    )
    params = 32 * 32 + 32 + 32 * 32 + 32 + 32 * 10 + 10
    assert rows == {
        "flat ring": (params * 4 * 3, "1.00"),
        "hierarchical": (params * 4 * 2, "1.50"),
        "hierarchical+fp16": (params * 2 * 2, "3.00"),
    }, proc.stdout
    diff = float(re.search(r"parameter difference: (\S+)", proc.stdout).group(1))
    assert diff < 1e-5, proc.stdout
