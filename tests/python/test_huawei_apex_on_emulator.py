"""Huawei's own Ascend apex on the torch_npu emulator alone: nothing of our apex.

The apex under test is Ascend's, assembled as its scripts/build.sh does (NVIDIA Apex at the commit
it pins, its patch/npu.patch, its src/ and tests/; overlay_support/huawei_apex.py) from branch
master, with its C++ extensions (``change_data_ptr``, ``apex_C``) compiled by torch's
cpp_extension against the torch running this test. It is pip-installed into a venv beside the
emulator's wheel (built by ``apexnpu build``), nothing else. There its NPU test runner
tests/L0/run_test.py must pass, and its NpuFused optimizers, O2 with combine_grad, fused gradient
clipping over FRACTAL_NZ weights and combine_ddp (2 processes on hccl) must train
(overlay_support/huawei_apex_train.py).

Needs APEXNPU_TEST_ASCEND (a git directory of github.com/Ascend/apex), APEXNPU_TEST_UPSTREAM
(NVIDIA Apex), APEXNPU_BINARY, and torch's C++ headers (Debian's python3-torch: ``apt-get install
libtorch-dev pybind11-dev``; torch from PyPI ships its own); skips with a message otherwise.
"""

import math
import os
import shutil
import subprocess

import pytest
import torch

import build_helpers as bh
from overlay_support import huawei_apex

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "overlay_support", "huawei_apex_train.py")
ASCEND = os.environ.get("APEXNPU_TEST_ASCEND")
UPSTREAM = os.environ.get("APEXNPU_TEST_UPSTREAM")
BRANCH = "master"

# What run_test.py skips, by Ascend's own decorators: (test, the reason it gives).
ASCEND_SKIPS = {
    "test_basic_casts.TestBasicCasts.test_group_norm_is_float": "NPU does not support group_norm in half",
    "test_combine_tensors.TestCombineTensors.test_storage_reuse_and_memory_release": "not stable test",
}
FUSED = [
    "NpuFusedSGD",
    "NpuFusedAdam",
    "NpuFusedAdamW",
    "NpuFusedAdamP",
    "NpuFusedBertAdam",
    "NpuFusedAdadelta",
    "NpuFusedLamb",
    "Lamb",
    "NpuFusedRMSprop",
    "NpuFusedRMSpropTF",
]
TWINS = {
    "NpuFusedSGD": "SGD",
    "NpuFusedAdam": "Adam",
    "NpuFusedAdamW": "AdamW",
    "NpuFusedAdadelta": "Adadelta",
    "NpuFusedRMSprop": "RMSprop",
}
# The worker's model: its parameters' shapes, weights first in each Linear.
SHAPES = [(32, 16), (32,), (32, 32), (32,), (1, 32), (1,)]


def slot(storage):
    """The elements a tensor of ``storage`` elements takes in Ascend's combined buffers."""
    return math.ceil(storage / 16) * 16 + 32


@pytest.fixture(scope="module")
def huawei(tmp_path_factory):
    """(the venv's python, Ascend's tests/L0 directory, a folder for the runs)."""
    if not ASCEND or not UPSTREAM:
        pytest.skip(
            "APEXNPU_TEST_ASCEND and APEXNPU_TEST_UPSTREAM must both be set (git "
            "directories of Ascend's apex and NVIDIA Apex) to build Huawei's apex"
        )
    python, tree = huawei_apex.venv_with_huawei_apex(tmp_path_factory, ASCEND, UPSTREAM, BRANCH)
    work = tmp_path_factory.mktemp("huawei-runs")
    runs = work / "runs"
    runs.mkdir()
    shutil.copy(WORKER, runs)  # run from a folder that holds nothing else of ours
    return python, os.path.join(tree, "tests", "L0"), runs


def env():
    return dict(bh.venv_env(), OMP_NUM_THREADS="2")


def test_huaweis_apex_is_installed_beside_the_emulator_alone(huawei):
    python, _, runs = huawei
    code = (
        "import importlib.util, os, sys, torch, torch_npu, apex, change_data_ptr, apex_C\n"
        "from apex.optimizers import NpuFusedAdam\n"
        "inside = lambda m: m.__file__.startswith(sys.prefix)\n"
        "print(torch_npu.__apexnpu_emulator__, inside(torch_npu), inside(apex),\n"
        "      inside(change_data_ptr), inside(apex_C), importlib.util.find_spec('apex.npu'),\n"
        "      os.path.exists(os.path.join(os.path.dirname(apex.__file__), 'contrib',\n"
        "                                  'combine_tensors', 'combine_tensors.py')),\n"
        "      torch.__version__ == %r)\n" % torch.__version__
    )
    proc = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=env(), cwd=str(runs)
    )
    assert proc.returncode == 0, proc.stderr
    # apex.npu is our apex's device layer: Huawei's apex has none and must do without it.
    assert proc.stdout.split() == ["True"] * 5 + ["None", "True", "True"]


def test_its_npu_test_runner_passes(huawei):
    python, l0, _ = huawei
    proc = subprocess.run(
        [python, "run_test.py"], cwd=l0, capture_output=True, text=True, env=env(), timeout=1200
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-6000:]
    outcomes = {}
    for line in log.splitlines():
        if " ... " in line and line.startswith("test"):
            name = line.split("(", 1)[1].split(")", 1)[0]
            outcomes[name] = line.split(" ... ", 1)[1].strip()
    skipped = {k: v for k, v in outcomes.items() if v.startswith("skipped")}
    assert skipped == {k: f"skipped '{v}'" for k, v in ASCEND_SKIPS.items()}, skipped
    ran = [line for line in log.splitlines() if line.startswith("Ran ")]
    assert ran and int(ran[0].split()[1]) == len(outcomes) >= 31, (ran, len(outcomes))
    assert "OK (skipped=2)" in log, log[-3000:]


_results = {}


def train(huawei, *args):
    """The worker's result for ``args`` (run once per module)."""
    if args not in _results:
        python, _, runs = huawei
        out = str(runs / ("-".join(args) + ".pt"))
        proc = subprocess.run(
            [python, "huawei_apex_train.py", out] + list(args),
            cwd=str(runs),
            capture_output=True,
            text=True,
            env=env(),
            timeout=600,
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
        _results[args] = torch.load(out)
    return _results[args]


def assert_trains(result, level, factor=0.05, device="npu:0"):
    losses = result["losses"]
    assert losses[-1] < factor * losses[0], losses
    assert all(math.isfinite(v) for v in losses)
    assert all(torch.isfinite(p).all() for p in result["master"])
    want = "torch.float16" if level == "O2" else "torch.float32"
    assert result["dtypes"] == [want] * len(SHAPES)
    assert set(result["devices"]) == {device}


def assert_same(a, b):
    assert a["losses"] == b["losses"]
    assert len(a["master"]) == len(b["master"]) == len(SHAPES)
    for x, y in zip(a["master"], b["master"]):
        assert torch.equal(x, y)


@pytest.mark.parametrize("level", ["O1", "O2"])
@pytest.mark.parametrize("name", FUSED)
def test_npu_fused_optimizers_train(huawei, name, level):
    assert_trains(train(huawei, "optim", name, level), level)


@pytest.mark.parametrize("level", ["O1", "O2"])
@pytest.mark.parametrize("name", sorted(TWINS))
def test_npu_fused_optimizers_step_as_their_torch_counterparts(huawei, name, level):
    # Ascend's fused step over the combined buffers against torch.optim's per-tensor step, both
    # under amp with the same static loss scale (a power of two: unscaling is exact). torch 1.13
    # writes the same formulas as Ascend: the same bits. torch 2.x moves Adam's first moment
    # with lerp_, which rounds otherwise; under O1 the fp16 forward passes can then round apart
    # (AdamW: 7.6e-5 at most after 40 steps, on weights up to 0.47).
    fused = train(huawei, "optim", name, level)
    plain = train(huawei, "optim", "torch." + TWINS[name], level)
    for x, y in zip(fused["master"], plain["master"]):
        if torch.__version__.startswith("1."):
            assert torch.equal(x, y)
        else:
            torch.testing.assert_close(x, y, rtol=1e-3, atol=2e-4)


def test_o2_with_combine_grad_trains_as_without(huawei):
    on = train(huawei, "combine", "O2", "1")
    off = train(huawei, "combine", "O2", "0")
    assert_trains(on, "O2")
    assert_same(on, off)
    assert on["scales"] == off["scales"]  # dynamic: the same overflows skip the same steps
    # One combined buffer of the fp16 gradients, each in its slot: get_storage_size reports a
    # re-pointed gradient's own storage, not the buffer's.
    assert on["combined"] == [sum(slot(math.prod(s)) for s in SHAPES)] and off["combined"] == []


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_fused_clipping_over_fractal_nz_weights(huawei, level):
    nz = train(huawei, "clip", level, "1")
    nd = train(huawei, "clip", level, "0")
    assert_trains(nz, level, factor=0.1)
    assert_same(nz, nd)  # a format changes how the NPU stores values, never the values
    padded = [
        math.ceil(s[0] / 16) * 16 * math.ceil(s[1] / 16) * 16 if len(s) == 2 else math.prod(s)
        for s in SHAPES
    ]
    assert nz["formats"] == [29, 2] * 3 and nz["sizes"] == padded
    # The optimizer's fp32 gradients (O2: of the master weights, made from the fp16 ones)
    # take FRACTAL_NZ slots: Ascend's apex casts each gradient to its parameter's format, and
    # its optimizer state (zeros_like of the parameters) must be laid out the same.
    assert nz["combined"] == [sum(slot(p) for p in padded)]
    assert nd["combined"] == [sum(slot(math.prod(s)) for s in SHAPES)]
    for mine, fused in nz["norms"]:
        assert math.isclose(mine, fused, rel_tol=1e-5), nz["norms"]


def test_combine_ddp_trains_two_processes_on_hccl(huawei):
    python, _, runs = huawei
    world = 2
    init = runs / "ddp-init"
    outs = [str(runs / f"ddp-rank{r}.pt") for r in range(world)]
    procs = [
        subprocess.Popen(
            [python, "huawei_apex_train.py", outs[r], "ddp", str(r), str(world), str(init)],
            cwd=str(runs),
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for r in range(world)
    ]
    logs = [p.communicate(timeout=600)[0] for p in procs]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log[-4000:]
    ranks = [torch.load(o) for o in outs]
    for rank, r in enumerate(ranks):
        assert (r["backend"], r["world"]) == ("hccl", world)
        assert_trains(r, "O2", factor=0.1, device=f"npu:{rank}")
    for key in ("params", "master"):
        for a, b in zip(ranks[0][key], ranks[1][key]):
            assert torch.equal(a, b), key  # one replica
    # The averaged gradients of the first step are the whole batch's, up to fp16 rounding.
    whole = train(huawei, "whole_batch", str(world))
    for got, want in zip(ranks[0]["first_grads"], whole["first_grads"]):
        torch.testing.assert_close(got, want, rtol=2e-3, atol=2e-3 * want.abs().max().item())
