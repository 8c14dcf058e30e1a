"""fp32 results on an emulated Ascend 910 in saturation mode: an overflow is stored as ±FLT_MAX, a
NaN as +0, and the float status is raised; an inf or NaN only carried from an input is left
alone; a 910B (INF/NAN mode) leaves fp32 results as they are. Both kernel paths: the runtime's
one-pass check and torch operations."""

import subprocess
import sys
import textwrap

import pytest

import overlay_support

SCRIPT = """
    import torch, torch_npu
    status = torch.npu.get_npu_overflow_flag
    big = torch.finfo(torch.float32).max

    def report(name, t):
        print(name, t.cpu().tolist(), torch_npu.npu.utils.is_support_inf_nan() or status())
        torch.npu.clear_npu_overflow_flag() if not torch_npu.npu.utils.is_support_inf_nan() \\
            else None

    report("mul", torch.full((3,), 4.0, device="npu") * big)
    report("log0", torch.log(torch.zeros(2, device="npu")))
    x = torch.ones(70000, device="npu")
    x[5] = 3e38
    x.mul_(2)  # in place: the written tensor's old values are not inputs
    report("inplace", x[4:7])
    ys = [torch.ones(2, device="npu") * 3e38, torch.ones(2, device="npu")]
    torch._foreach_mul_(ys, 2.0)  # returns nothing: the written lists are the results
    report("foreach", torch.cat(ys))
    mask = torch.tensor([True, False]).npu()
    report("fill", torch.zeros(2, device="npu").masked_fill(mask, float("-inf")))
    carried = torch.tensor([float("inf"), 1.0]).npu()  # a move from the host carries inf
    report("carried", carried + 1)
    report("nan", torch.zeros(1, device="npu") / torch.zeros(1, device="npu"))
"""

MAX = 3.4028234663852886e38


def run(path, chip, runtime):
    env = overlay_support.overlay_env(runtime)
    for name in ("APEXNPU_SOC_VERSION", "APEXNPU_INF_NAN_MODE", "INF_NAN_MODE_FORCE_DISABLE"):
        env.pop(name, None)
    env.update(APEXNPU_OPTIM_PATH=path, APEXNPU_SOC_VERSION=chip)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in proc.stdout.splitlines()}


@pytest.mark.parametrize("path", ["torch", "runtime"])
def test_a_910_saturates_fp32_overflow_and_raises_the_status(path):
    runtime = overlay_support.runtime_dir() if path == "runtime" else None
    if path == "runtime" and runtime is None:
        pytest.skip(overlay_support.RUNTIME_SKIP_REASON)
    got = run(path, "Ascend910A", runtime)
    assert got["mul"] == f"[{MAX}, {MAX}, {MAX}] True"
    assert got["log0"] == f"[-{MAX}, -{MAX}] True"
    assert got["inplace"] == f"[2.0, {MAX}, 2.0] True"
    assert got["foreach"] == f"[{MAX}, {MAX}, 2.0, 2.0] True"
    assert got["fill"] == "[-inf, 0.0] False"
    assert got["carried"] == "[inf, 2.0] False"
    assert got["nan"] == "[0.0] True"


def test_a_910b_leaves_fp32_results_as_ieee_gives_them():
    got = run("torch", "Ascend910B1", None)
    assert got["mul"] == "[inf, inf, inf] True"  # True: INF/NAN mode, the status is not read
    assert got["log0"] == "[-inf, -inf] True"
    assert got["nan"] == "[nan] True"


@pytest.mark.skipif(
    int(__import__("torch").__version__.split(".")[0]) < 2,
    reason="torch 1.13's FakeTensorMode takes only torch's own device type, "
    "which names no NPU there",
)
def test_fake_tensors_are_not_read():
    """Under torch's FakeTensorMode results have no values: nothing is checked or saturated."""
    out = overlay_support.run_with_emulator("""
        import torch, torch_npu
        from torch._subclasses.fake_tensor import FakeTensorMode
        with FakeTensorMode():
            x = torch.randn(4, 3, 8, 8).npu().permute(0, 2, 1, 3).contiguous()
            y = x * 2
        print(y.is_contiguous(), tuple(y.shape), torch.npu.get_npu_overflow_flag())
    """)
    assert out == ["True", "(4,", "8,", "3,", "8)", "False"]
