"""``torch.npu`` calls DeepSpeed's NPU accelerator makes beyond the common ones, on both torches:
``torch.npu._lazy_call`` (its activation checkpointing sets NPU generator states through it)
runs a call at once when the NPUs are initialised, else queues it until they are, in order, and
a queued call that fails is reported at initialisation with where it was queued."""

import json
import subprocess
import sys
import textwrap

import overlay_support

SCRIPT = textwrap.dedent("""
    import json
    import torch
    import torch_npu
    out = {"initialised_before": torch.npu.is_initialized(), "calls": []}
    torch.npu._lazy_call(lambda: out["calls"].append(["first", torch.npu.is_initialized()]))
    torch.npu._lazy_call(lambda: out["calls"].append(["second", torch.npu.is_initialized()]))
    out["queued"] = list(out["calls"])
    torch.zeros(1, device="npu")  # the first NPU use initialises the NPUs
    torch.npu._lazy_call(lambda: out["calls"].append(["after", True]))
    print(json.dumps(out))
""")

FAILING = textwrap.dedent("""
    import torch
    import torch_npu
    def queued_here():
        torch.npu._lazy_call(lambda: 1 / 0)
    queued_here()
    torch.npu.set_device(0)
""")


def run(script):
    return subprocess.run(
        [sys.executable, "-c", script],
        env=overlay_support.overlay_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_lazy_call_waits_for_the_npus_then_runs_at_once():
    proc = run(SCRIPT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["initialised_before"] is False and out["queued"] == []
    assert out["calls"] == [["first", True], ["second", True], ["after", True]]


def test_a_failing_queued_call_is_reported_with_where_it_was_queued():
    proc = run(FAILING)
    assert proc.returncode != 0
    assert "NPU call failed lazily at initialization with error: division by zero" in proc.stderr
    assert "in queued_here" in proc.stderr, proc.stderr[-2000:]
