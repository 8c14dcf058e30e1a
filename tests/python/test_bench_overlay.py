"""bench/overlay_bench.py runs end to end on tiny sizes (the runtime built from this checkout with
$APEXNPU_BINARY) and prints a row per optimizer and size with a ratio and a goal verdict; the
fused and torch optimizers agree. Speed itself is not asserted: that is the bench's job."""

import os
import re
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(REPO, "bench", "overlay_bench.py")


def run_bench(*args):
    return subprocess.run(
        [sys.executable, BENCH, *args], capture_output=True, text=True, timeout=900
    )


def test_tiny_run_prints_every_row():
    binary = os.environ.get("APEXNPU_BINARY")
    if not binary:
        pytest.skip("APEXNPU_BINARY is not set: cannot build the runtime")
    proc = run_bench(
        "--binary",
        binary,
        "--sizes",
        "0.02,0.05",
        "--tensors",
        "7",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--threads",
        "1",
        "--skip-amp",
    )
    assert proc.returncode == 0, proc.stderr
    rows = re.findall(
        r"^(Adam|SGD|LAMB)\s+([\d.]+)M\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)x\s+"
        r"([\d.]+)x\s+(met|MISSED)\s+(\S+)$",
        proc.stdout,
        re.M,
    )
    assert [(r[0], r[1]) for r in rows] == [
        (n, s) for s in ("0.02", "0.05") for n in ("Adam", "SGD", "LAMB")
    ], proc.stdout
    for name, _, fused, torch_ms, ratio, goal, verdict, diff in rows:
        # The times are printed to 0.01 ms and the ratio to 0.01.
        f, t = float(fused), float(torch_ms)
        low, high = (t - 0.005) / (f + 0.005), (t + 0.005) / max(f - 0.005, 1e-9)
        assert low - 0.005 <= float(ratio) <= high + 0.005, (name, fused, torch_ms, ratio)
        assert (verdict == "met") == (float(ratio) >= float(goal))
        assert float(diff) < 1e-4, (name, diff)  # same steps, same numbers


def test_bad_apex_path_is_a_clear_error(tmp_path):
    proc = run_bench("--apex-path", str(tmp_path), "--skip-amp")
    assert proc.returncode != 0
    assert f"{tmp_path} holds no apex/ package" in proc.stderr


def test_amp_steps_run_o0_and_o2_in_lockstep_and_agree_on_losses(wheel_env):
    """The amp table (bench/amp_steps.py) on the installed wheels: a row per path with a ratio
    and a verdict that agree, and the same losses on both paths."""
    proc = subprocess.run(
        [
            wheel_env["APEXNPU_VENV_PYTHON"],
            os.path.join(REPO, "bench", "amp_steps.py"),
            "--models",
            "cnn",
            "--rounds",
            "1",
            "--amp-steps",
            "2",
            "--threads",
            "1",
            "--tables",
            "amp",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=wheel_env,
    )
    assert proc.returncode == 0, proc.stderr
    rows = re.findall(
        r"^cnn\s+(general|fast)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)-([\d.]+)\s+"
        r"([\d.]+)-([\d.]+)\s+1\.25\s+(met|MISSED)$",
        proc.stdout,
        re.M,
    )
    assert [r[0] for r in rows] == ["general", "fast"], proc.stdout
    for _, o0, o2, ratio, p25, p75, low, high, verdict in rows:
        assert float(o0) > 0 and float(o2) > 0
        assert (verdict == "met") == (float(ratio) <= 1.25)
        # The median lies between the pairs' quartiles; one round's median is the median.
        assert float(p25) <= float(ratio) <= float(p75), proc.stdout
        assert float(low) == float(ratio) == float(high), proc.stdout
    assert "general vs fast path: bit-identical" in proc.stdout, proc.stdout
