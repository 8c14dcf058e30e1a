"""Huawei's own Ascend apex tests, unmodified, against our installed wheels (apex + the torch_npu
emulator) on the emulated NPU.

Needs APEXNPU_TEST_ASCEND (a git directory of github.com/Ascend/apex, read in place with
`git show`) and APEXNPU_TEST_UPSTREAM (NVIDIA Apex, for `apexnpu gen`); skips with a message
otherwise. The tests are those Ascend's scripts/gen.sh makes: NVIDIA's tests patched by Ascend's
patch/npu.patch (branch master) plus Ascend's own test files. Only their test files are used;
the apex package under test is ours, built by apexnpu and pip-installed into a venv.

They run as Ascend's tests/L0/run_test.py runs them on an NPU (overlay_support/ascend_runner.py).
Tests written for CUDA run through torch_npu.contrib.transfer_to_npu, as Ascend's migration
guide says to run CUDA code. Every test passes except those excluded below, each with its reason.
"""

import json
import os
import subprocess
import sys

import pytest

import build_helpers as bh

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "overlay_support", "ascend_runner.py")
ASCEND = os.environ.get("APEXNPU_TEST_ASCEND")
UPSTREAM = os.environ.get("APEXNPU_TEST_UPSTREAM")
BRANCH = "master"

# Test files run on the NPU as written (Ascend's run_test.py runs the first six there).
NPU_MODULES = [
    "run_amp/test_basic_casts",
    "run_amp/test_cache",
    "run_amp/test_promotion",
    "run_amp/test_larc",
    "run_amp/test_add_param_group",
    "../../apex/contrib/test/test_combine_tensors",
]
# Test files written for CUDA ('cuda' devices, torch.cuda.FloatTensor): run after transfer_to_npu.
CUDA_MODULES = ["run_amp/test_checkpointing", "run_amp/test_multiple_models_optimizers_losses"]
# Test files that cannot run here, and why.
EXCLUDED = {
    "run_amp/test_fused_sgd": "needs amp_C and apex.optimizers.FusedSGD, CUDA-only extensions "
    "(it skips itself without them)",
    "run_amp/test_multi_tensor_axpby": "needs amp_C, a CUDA-only extension",
    "run_amp/test_multi_tensor_l2norm": "needs amp_C, a CUDA-only extension",
    "run_amp/test_multi_tensor_scale": "needs amp_C, a CUDA-only extension",
    "run_optimizers/test_lamb": "compares apex.optimizers.FusedLAMB with a reference built on "
    "amp_C: both CUDA-only extensions",
    "run_optimizers/test_lamb_mnist": "downloads MNIST",
    "run_optimizers/test_fused_optimizer": "tests apex.optimizers.FusedAdam/FusedSGD/FusedAdagrad, "
    "CUDA-only extensions (not part of Ascend's patch)",
    "run_amp/test_rnn": "contradicts itself on an NPU: Ascend's common_init makes CPU tensors the "
    "default there while the test expects torch.npu.HalfTensor outputs, so "
    "Ascend's run_test.py does not run it either; O1's RNN casts on the NPU are "
    "tested by test_overlay_amp_e2e (o1_casts.py)",
}


# Single tests whose CUDA expectation the NPU's semantics (Ascend's apex's and ours) contradict:
# the assertion they may fail on, and why. Any other failure of theirs still fails.
DIFFERS = {
    "test_checkpointing.TestCheckpointing.test_loss_scale_decrease": (
        "self.assertEqual(update_ls, init_ls / 2**factor)",
        "it forces overflows through the forward pass (model(x * 2**17)), which on CUDA gives inf "
        "and so non-finite gradients; on the NPU fp16 saturates instead, and amp.scale_loss "
        "clears the float status on entry, as Ascend's apex does, so a forward saturation is no "
        "overflow of the step and only the steps whose backward overflows back off (Ascend's "
        "run_test.py does not run this CUDA file)",
    ),
}


def apexnpu(*args, timeout):
    binary = os.environ.get("APEXNPU_BINARY")
    if not binary:
        pytest.skip("APEXNPU_BINARY is not set (the apexnpu binary to build the wheels with)")
    return subprocess.run([binary] + list(args), capture_output=True, text=True, timeout=timeout)


def make_venv(path, wheels):
    """A venv over the running Python's torch with ``wheels`` pip-installed; its python."""
    python = bh.make_torch_venv(path)
    inst = bh.pip(python, "install", "--no-index", "--no-deps", *wheels)
    assert inst.returncode == 0, inst.stdout
    return python


def _git_show(path):
    return subprocess.run(
        ["git", "--git-dir", ASCEND, "show", f"{BRANCH}:{path}"], capture_output=True, check=True
    ).stdout


@pytest.fixture(scope="module")
def ascend(tmp_path_factory):
    """(venv python, the Ascend test tree's tests/L0 directory)."""
    if not ASCEND or not UPSTREAM:
        pytest.skip(
            "APEXNPU_TEST_ASCEND and APEXNPU_TEST_UPSTREAM must both be set (git "
            "directories of Ascend's apex and NVIDIA Apex) to run Ascend's tests"
        )
    work = tmp_path_factory.mktemp("ascend")
    ours = str(work / "ours")
    gen = apexnpu("gen", "--upstream", UPSTREAM, "-o", ours, timeout=1200)
    assert gen.returncode == 0, gen.stderr
    dist = str(work / "dist")
    build = apexnpu(
        "-q",
        "build",
        "--python=" + sys.executable,
        "--tree",
        ours,
        "-o",
        dist,
        "--wheel",
        "-j2",
        timeout=1800,
    )
    assert build.returncode == 0, build.stderr
    wheels = sorted(os.path.join(dist, f) for f in os.listdir(dist) if f.endswith(".whl"))
    assert len(wheels) == 2, wheels  # apex and the torch_npu emulator
    python = make_venv(str(work / "venv"), wheels)

    # Ascend's tree: NVIDIA's tests with Ascend's patch applied, then its own files (gen.sh).
    patch = work / "ascend.patch"
    patch.write_bytes(_git_show("patch/npu.patch"))
    tree = str(work / "ascend-tree")
    made = apexnpu(
        "gen",
        "--upstream",
        UPSTREAM,
        "--patch",
        str(patch),
        "--no-overlay",
        "-o",
        tree,
        timeout=1200,
    )
    assert made.returncode == 0, made.stderr
    for src, dst in (
        ("tests/L0/device.py", "tests/L0/device.py"),
        (
            "src/apex/contrib/test/test_combine_tensors.py",
            "apex/contrib/test/test_combine_tensors.py",
        ),
    ):
        target = os.path.join(tree, dst)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(_git_show(src))
    return python, os.path.join(tree, "tests", "L0")


def run_modules(python, cwd, modules, transfer):
    env = dict(os.environ, OMP_NUM_THREADS="2")
    env.pop("PYTHONPATH", None)
    args = [python, RUNNER] + (["--transfer"] if transfer else []) + modules
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, timeout=2400)
    assert proc.returncode == 0 and proc.stdout.strip(), proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check(results):
    assert results, "no test ran"
    bad = {
        k: v
        for k, v in results.items()
        if v[0] in ("fail", "error")
        and not (k in DIFFERS and v[0] == "fail" and DIFFERS[k][0] in v[1])
    }
    assert not bad, "\n\n".join(f"{k}: {v[0]}\n{v[1]}" for k, v in bad.items())


@pytest.mark.parametrize("module", NPU_MODULES)
def test_npu_tests_pass(ascend, module):
    python, cwd = ascend
    check(run_modules(python, cwd, [module], transfer=False))


@pytest.mark.parametrize("module", CUDA_MODULES)
def test_cuda_tests_pass_after_transfer_to_npu(ascend, module):
    python, cwd = ascend
    check(run_modules(python, cwd, [module], transfer=True))


def test_every_test_file_is_run_or_excluded_with_a_reason(ascend):
    _, cwd = ascend
    found = set()
    for folder in ("run_amp", "run_optimizers"):
        for name in os.listdir(os.path.join(cwd, folder)):
            if name.startswith("test_") and name.endswith(".py"):
                found.add(f"{folder}/{name[:-3]}")
    covered = set(NPU_MODULES) | set(CUDA_MODULES) | set(EXCLUDED)
    assert found <= covered, sorted(found - covered)
