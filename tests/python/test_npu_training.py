"""Ascend-style data-parallel training on the emulated NPU, 2 and 4 processes: ``import
torch_npu``, ``npu:{rank}`` devices, hccl, torch DDP or apex's combine_ddp, the NpuFused*
optimizers, and a checkpoint saved on rank 0 and loaded with ``map_location`` on every rank
(overlay_support/npu_ranks_worker.py is the training script).

What must hold after 20 steps: every rank holds the same parameters and optimizer state, bit for
bit; resuming from the step-10 checkpoint gives the very same bits as training straight through
(at O2 with APEXNPU_EXACT_RESUME=1, which restores the saved fp32 masters);
and the ranks, each on its share of the batch, match one process on the whole batch within
fp32 rounding (rtol 1e-4, atol 1e-5: the gradients are averaged in another order) or, with fp16
models (O1/O2), within 2e-2 (forward and backward run in fp16, whose 11-bit significand gives
~5e-4 per operation).

Without apex.amp the runs need only the overlay and torch_npu's source (CI). Runs through
apex.amp (O0-O2, combine_ddp) need the installed wheels built from NVIDIA Apex, so they skip
unless APEXNPU_TEST_UPSTREAM is set.
"""

import os
import subprocess

import pytest
import torch

import overlay_support
from overlay_support import ranks

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "overlay_support", "npu_ranks_worker.py")
STEPS, RESUME_AT = 20, 10

RUNTIME_DIR = overlay_support.runtime_dir()


def overlay_python_env():
    """Environment running the worker from the overlay and torch_npu, with the runtime."""
    return overlay_support.overlay_env(RUNTIME_DIR)


def launch(out, world, parallel, opt_level, optimizer, phase, env, python=None, per_node=None):
    results = ranks.launch(
        [WORKER, str(out), parallel, opt_level, optimizer, str(STEPS), str(RESUME_AT), phase],
        world,
        env,
        per_node=per_node,
        timeout=900,
        python=python,
    )
    for r in results:
        assert r.returncode == 0, r
    return [torch.load(out / f"{phase}-rank{rank}.pt", map_location="cpu") for rank in range(world)]


def train(tmp_path, world, parallel, opt_level, optimizer, env, python=None, per_node=None):
    """[{straight, resumed} per rank], and one process on the whole batch."""
    out, one = tmp_path / "ranks", tmp_path / "one"
    out.mkdir()
    one.mkdir()
    straight = launch(out, world, parallel, opt_level, optimizer, "straight", env, python, per_node)
    resumed = launch(out, world, parallel, opt_level, optimizer, "resumed", env, python, per_node)
    reference = launch(one, 1, "none", opt_level, optimizer, "straight", env, python)[0]
    return [{"straight": s, "resumed": r} for s, r in zip(straight, resumed)], reference


def flat_state(run):
    """Every tensor of a run (parameters, then optimizer state) in a fixed order."""
    tensors = [run["params"][k] for k in sorted(run["params"])]
    for key in sorted(run["optimizer"]["state"]):
        state = run["optimizer"]["state"][key]
        tensors += [state[k] for k in sorted(state) if isinstance(state[k], torch.Tensor)]
    return tensors


def check(results, fp16):
    rank_results, one_process = results
    straight = flat_state(rank_results[0]["straight"])
    for rank, got in enumerate(rank_results):
        for name in ("straight", "resumed"):
            tensors = flat_state(got[name])
            assert len(tensors) == len(straight)
            for a, b in zip(tensors, straight):
                assert torch.equal(a, b), f"rank {rank} {name} differs from rank 0 straight"
    one = one_process["params"]
    tol = dict(rtol=2e-2, atol=2e-2) if fp16 else dict(rtol=1e-4, atol=1e-5)
    for key, value in rank_results[0]["straight"]["params"].items():
        assert torch.allclose(value.float(), one[key].float(), **tol), key


@pytest.mark.parametrize("world,optimizer", [(2, "sgd"), (2, "adam"), (2, "lamb"), (4, "lamb")])
def test_ddp_over_hccl_with_fused_optimizers(tmp_path, world, optimizer):
    check(train(tmp_path, world, "ddp", "none", optimizer, overlay_python_env()), fp16=False)


def test_two_nodes_of_two_processes(tmp_path):
    check(train(tmp_path, 4, "ddp", "none", "adam", overlay_python_env(), per_node=2), fp16=False)


# --- through apex.amp, on the installed wheels ------------------------------------------------

# combine_ddp needs combine_grad, which amp allows at O1 and O2 only (as Ascend's apex).
AMP_CASES = (
    [
        (2, parallel, level, optimizer)
        for parallel in ("ddp", "combine_ddp")
        for level in ("O0", "O1", "O2")
        for optimizer in ("sgd", "adam", "lamb")
        if not (parallel == "combine_ddp" and level == "O0")
    ]
    + [
        (2, "ddp+combine_grad", level, optimizer)
        for level in ("O1", "O2")
        for optimizer in ("sgd", "adam", "lamb")
    ]
    + [(4, "ddp", "O2", "adam"), (4, "combine_ddp", "O2", "lamb")]
)


def train_on_wheels(tmp_path, wheel_env, world, parallel, opt_level, optimizer, env=None):
    # A resume at O2 continues bit for bit only with the saved fp32 masters restored
    # (APEXNPU_EXACT_RESUME=1); by default it starts from the fp16 weights as Ascend's apex does.
    env = dict(wheel_env, APEXNPU_EXACT_RESUME="1", **(env or {}))
    return train(
        tmp_path,
        world,
        parallel,
        opt_level,
        optimizer,
        env,
        python=wheel_env["APEXNPU_VENV_PYTHON"],
    )


@pytest.mark.parametrize("world,parallel,opt_level,optimizer", AMP_CASES)
def test_amp_data_parallel(tmp_path, wheel_env, world, parallel, opt_level, optimizer):
    got = train_on_wheels(tmp_path, wheel_env, world, parallel, opt_level, optimizer)
    check(got, fp16=opt_level != "O0")
    # No spurious overflow (DDP + O2 once skipped its first two steps): every step is taken and
    # the scale stays where it started.
    for rank in got[0]:
        for name in ("straight", "resumed"):
            assert all(stepped for stepped, _ in rank[name]["history"]), rank[name]["history"]
            start = 1.0 if opt_level == "O0" else 2.0**10
            assert {scale for _, scale in rank[name]["history"]} == {start}


@pytest.mark.parametrize("parallel", ["ddp", "combine_ddp"])
@pytest.mark.parametrize("opt_level", ["O1", "O2"])
def test_an_overflow_on_one_rank_is_skipped_by_every_rank(tmp_path, wheel_env, parallel, opt_level):
    # Rank 1 alone overflows at step 4 (its float status is its own): both ranks skip that step
    # and back off, as Ascend's check_overflow_and_sync makes them, and stay one replica.
    got, _ = train_on_wheels(
        tmp_path, wheel_env, 2, parallel, opt_level, "adam", env={"NPU_RANKS_OVERFLOW_AT": "4"}
    )
    for rank in got:
        history = rank["straight"]["history"]
        assert [stepped for stepped, _ in history] == [i != 4 for i in range(STEPS)], history
        assert [scale for _, scale in history] == [1024.0] * 4 + [512.0] * (STEPS - 4), history
    for name in ("straight", "resumed"):
        assert got[0][name]["history"] == got[1][name]["history"]
        for a, b in zip(flat_state(got[0][name]), flat_state(got[1][name])):
            assert torch.equal(a, b), name


def test_the_readme_quick_start_trains(tmp_path, wheel_env):
    with open(os.path.join(overlay_support.REPO_ROOT, "README.md")) as f:
        readme = f.read()
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    proc = subprocess.run(
        [wheel_env["APEXNPU_VENV_PYTHON"], "-c", code],
        capture_output=True,
        text=True,
        env=wheel_env,
        cwd=str(tmp_path),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("step 199: loss ") and last.endswith(" on npu:0"), last
    assert float(last.split()[3]) < 1.0, last  # from ~16 at the start


def test_an_nvidia_apex_cuda_example_runs_unchanged_after_transfer_to_npu(tmp_path, wheel_env):
    script = os.path.join(HERE, "overlay_support", "apex_guide_cuda_example.py")
    checkpoint = str(tmp_path / "amp_checkpoint.pt")
    outputs = []
    for mode in ("train", "restore"):
        proc = subprocess.run(
            [wheel_env["APEXNPU_VENV_PYTHON"], script, mode, checkpoint],
            capture_output=True,
            text=True,
            env=wheel_env,
            cwd=str(tmp_path),
            timeout=600,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outputs.append(proc.stdout.strip().splitlines()[-1].split())  # after amp's own report
    for first, last, same, device, cuda in outputs:
        assert same == "True" and device == "npu:0" and cuda == "True"
        assert float(last) < float(first)
