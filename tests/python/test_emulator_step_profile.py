"""``torch_npu.utils.profiler.Profile``, the step profiler of Ascend's model zoo scripts (CRNN's
``main_8p.py`` makes one per epoch from ``PROFILE_TYPE``), behaves as torch_npu's: its
arguments in torch_npu's order, one instance per process, ``TORCH`` and ``ASCEND_PROFILER``
profile one step and then end the process, any other type profiles nothing, and ``start`` and
``end`` must alternate. Each case runs in a fresh interpreter (the instance is the process's)."""

import json
import os
import subprocess
import sys
import textwrap

import overlay_support

STEPS = """
    import json, os, sys, torch, torch_npu
    from torch_npu.utils.profiler import Profile
    save = sys.argv[1]
    done = []
    for epoch in range(2):  # a script that makes its Profile in each epoch, as CRNN's does
        profiler = Profile({args})
        for _ in range(2):
            profiler.start()
            (torch.ones(8).npu() * 2).sum()
            profiler.end()
            done.append(profiler.step_count)
    print(json.dumps(done))
"""


def run(tmp_path, args):
    """(return code, the steps counted before the end, the files written, stderr)."""
    env = overlay_support.overlay_env()
    env["OMP_NUM_THREADS"] = "1"
    save = str(tmp_path / "prof")
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(STEPS.format(args=args)), save],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = proc.stdout.strip().splitlines()
    files = sorted(os.listdir(save)) if os.path.isdir(save) else None
    return proc.returncode, json.loads(lines[-1]) if lines else None, files, proc.stderr


def test_torch_profiles_its_step_writes_the_trace_and_ends_the_process(tmp_path):
    # Positional, in torch_npu's order: start_step, save_path, profile_type.
    code, done, files, err = run(tmp_path, "3, save, 'TORCH'")
    assert code == 0 and done is None, err  # the exit came inside the second epoch's first step
    assert len(files) == 1 and files[0].startswith("torch_prof_"), files
    with open(tmp_path / "prof" / files[0]) as f:
        trace = json.load(f)  # a chrome trace: torch 1.13's autograd profiler writes bare events
    assert trace["traceEvents"] if isinstance(trace, dict) else trace


def test_ascend_profiler_is_a_profile_type(tmp_path):
    code, done, files, err = run(
        tmp_path, "start_step=1, save_path=save, profile_type='ASCEND_PROFILER'"
    )
    assert code == 0 and done is None, err
    assert files, "the tensorboard handler wrote no trace"


def test_other_types_profile_nothing_and_the_count_goes_on_across_epochs(tmp_path):
    for kind in ("None", "'CANN'", "'GE'", "'ANYTHING'"):
        code, done, files, err = run(tmp_path, f"start_step=1, save_path=save, profile_type={kind}")
        assert code == 0, err
        assert files is None  # not even the folder
        assert done == [0, 0, 0, 0]  # a disabled profiler counts nothing
    code, done, _, err = run(tmp_path, "start_step=9, save_path=save, profile_type='TORCH'")
    assert code == 0 and done == [1, 2, 3, 4], err  # one Profile: epoch 2 goes on from epoch 1


def test_start_and_end_must_alternate():
    code = """
        import torch_npu
        from torch_npu.utils.profiler import Profile
        p = Profile(profile_type=None)
        for call in (p.end, lambda: (p.start(), p.start())):
            try:
                call()
            except RuntimeError as e:
                print(e)
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=overlay_support.overlay_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "Profile.end() called without start()",
        "Profile.start() called twice: end() must close each step",
    ]


def test_arguments_the_profiler_does_not_take_are_refused(tmp_path):
    code, _, _, err = run(tmp_path, "profile_type='TORCH', save_path=save, use_gpu=True")
    assert code != 0 and "['use_gpu'] are not arguments of the TORCH profiler" in err
