"""bench/runtime_ratios.py's arithmetic on saved benchmarks (no timing): each ratio is the
kernel's best bandwidth over its own program's best read-modify-write (and the medians over
the medians), a baseline's ratios go in the `before` columns, and the goals at 64M with 2
threads are 0.9 for Adam and SGD, 0.85 for both LAMBs and 0.7 for the others."""

import json
import os
import re
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "bench", "runtime_ratios.py")


def bench(kernel, gbps, size=64, threads=2):
    return {
        "name": f"{kernel}/{size}M/threads:{threads}/real_time",
        "run_type": "iteration",
        "bytes_per_second": gbps * 1e9,
        "real_time": 10.0,
        "time_unit": "ms",
        "B_per_elem": 28,
        "actual_B_per_elem": 40 if "Lamb" in kernel else 28,
    }


def run(tmp_path, data):
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--json", str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def row(out, kernel):
    line = re.search(rf"^  {kernel} .*$", out, re.M)
    assert line, out
    return line.group(0).split()


def test_ratios_against_the_same_programs_read_modify_write_with_the_goals(tmp_path):
    # Two repetitions: best RMW 20 (median 15), best Lamb 18 (median 14).
    after = [
        bench("stream_rmw", 20),
        bench("stream_rmw", 10),
        bench("Lamb", 18),
        bench("Lamb", 10),
        bench("AdamP", 13),
        bench("AdamP", 13),
        bench("Adam", 17),
        bench("Adam", 17),
    ]
    out = run(tmp_path, after)
    lamb = row(out, "Lamb")
    assert lamb[3:7] == ["0.90", "0.93", "1.43", ">="], out  # 18/20, 14/15, 40/28
    assert lamb[7:] == ["0.85", "met"], out
    assert row(out, "AdamP")[-2:] == ["0.70", "MISSED"], out  # 13/20 = 0.65
    assert row(out, "Adam")[-3:] == [">=", "0.90", "MISSED"], out  # 17/20 = 0.85
    assert "missed at 64M / 2 threads: Adam 0.85 < 0.90, AdamP 0.65 < 0.70" in out
    assert "before" not in out


def test_a_baseline_goes_in_the_before_columns(tmp_path):
    after = [
        bench("stream_rmw", 20),
        bench("NpuFusedLamb_global_norm", 18),
        bench("stream_rmw", 10, threads=1),
        bench("NpuFusedLamb_global_norm", 5, threads=1),
    ]
    # The baseline's program measured a slower memory: its ratios use its own RMW.
    before = [bench("stream_rmw", 10), bench("NpuFusedLamb_global_norm", 6)]
    out = run(tmp_path, {"benchmarks": after, "baseline": before})
    assert "baseline's read-modify-write 10.0 GB/s" in out
    two = out[out.index("2 thread(s)") :]
    assert row(two, "NpuFusedLamb_global_norm")[3:] == [
        "0.90",
        "0.90",
        "1.43",
        "0.60",
        "0.60",
        ">=",
        "0.85",
        "met",
    ], out
    one = out[out.index("1 thread(s)") : out.index("2 thread(s)")]
    assert row(one, "NpuFusedLamb_global_norm")[5:] == ["1.43", "-", "-"], (
        out
    )  # no goal at 1 thread
