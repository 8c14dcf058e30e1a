"""combine_ddp on the emulated NPU: two real ranks (processes joined by gloo) average their
combined gradients and train like one process on the whole batch."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import overlay_support
from overlay_support import use_overlay

use_overlay()
sys.path.insert(0, os.path.dirname(overlay_support.__file__))
import ddp_worker  # noqa: E402
from apex.npu.amp.amp_options import NpuAmpOptions  # noqa: E402

WORKER = os.path.join(os.path.dirname(overlay_support.__file__), "ddp_worker.py")
WORLD = 2


def run_ranks(scenario, tmp_path, **env_vars):
    """Runs every rank of `scenario` at once; returns each rank's saved result."""
    tmp_path = tmp_path / "-".join([scenario] + [f"{k}={v}" for k, v in env_vars.items()])
    tmp_path.mkdir()
    init = tmp_path / "init"
    outs = [tmp_path / f"rank{r}.pt" for r in range(WORLD)]
    env = dict(overlay_support.overlay_env(), **env_vars)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # ranks on this machine; its name may not resolve
    procs = [
        subprocess.Popen(
            [sys.executable, WORKER, scenario, str(r), str(WORLD), str(init), str(outs[r])],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for r in range(WORLD)
    ]
    logs = [p.communicate(timeout=300)[0] for p in procs]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log
    return [torch.load(o) for o in outs]


def assert_one_replica(ranks, key="params"):
    """No rank failed, and every rank holds the same tensors under `key`, bit for bit."""
    for r in ranks:
        assert "error" not in r, r.get("error")
    for a, b in zip(ranks[0][key], ranks[1][key]):
        assert torch.equal(a, b)


def reference_training():
    """One process, rank 0's initial weights, the whole batch: what the ranks must agree with."""
    model = ddp_worker.make_model(100)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in ddp_worker.full_batches(WORLD):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return [p.detach() for p in model.parameters()]


def test_two_ranks_train_like_one_process_on_the_whole_batch(tmp_path):
    ranks = run_ranks("fp32", tmp_path)
    assert_one_replica(ranks)
    assert all(r["found"] == [False] * ddp_worker.STEPS for r in ranks)
    # Equal shares and a mean loss: the mean of the ranks' gradients is the whole batch's.
    # fp32, differently ordered sums: a few ulps.
    for got, want in zip(ranks[0]["params"], reference_training()):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scenario", ["fp16", "fp16_with_fp32_head"])
def test_fp16_model_gradients_are_averaged_in_their_own_buffer(tmp_path, scenario):
    ranks = run_ranks(scenario, tmp_path)
    assert_one_replica(ranks)
    assert_one_replica(ranks, "first_grads")
    # The first step's master gradients against fp32 gradients of the whole batch at the same
    # weights: the fp16 forward and backward and the fp16 average bound the difference.
    model = ddp_worker.make_model(100).half().float()
    x, y = ddp_worker.full_batches(WORLD)[0]
    F.cross_entropy(model(x), y).backward()
    for got, p in zip(ranks[0]["first_grads"], model.parameters()):
        torch.testing.assert_close(got, p.grad, rtol=2e-2, atol=2e-3)


def test_an_overflow_on_one_rank_skips_the_step_on_every_rank(tmp_path):
    ranks = run_ranks("overflow_on_one_rank", tmp_path)
    assert_one_replica(ranks)
    assert all(r["found"] == [True] * ddp_worker.STEPS for r in ranks)
    for got, initial in zip(ranks[0]["params"], ddp_worker.make_model(100).parameters()):
        assert torch.equal(got, initial.detach())  # no step was taken


def test_slices_go_out_during_backward_with_the_same_bits_as_after_it(tmp_path):
    # Each slice's all-reduce starts from a gradient hook as soon as backward has accumulated
    # its gradients; what is averaged, element by element, does not change, so the results are
    # those of averaging after backward (APEXNPU_COMBINE_DDP_OVERLAP=0), bit for bit.
    overlapped = run_ranks("wide_fp16", tmp_path)
    after = run_ranks("wide_fp16", tmp_path, APEXNPU_COMBINE_DDP_OVERLAP="0")
    assert_one_replica(overlapped)
    for r in overlapped + after:
        assert r["slices"] >= 3 and r["found"] == [False] * ddp_worker.STEPS
    # The first backward has no plan yet; every later one starts slices before it ends.
    assert all(r["started"][0] == 0 and min(r["started"][1:]) >= 1 for r in overlapped)
    assert all(r["started"] == [0] * ddp_worker.STEPS for r in after)
    for a, b in zip(overlapped[0]["params"], after[0]["params"]):
        assert torch.equal(a, b)


def test_a_buffer_is_averaged_in_slices_to_its_last_element(tmp_path):
    ranks = run_ranks("slices", tmp_path)
    want = torch.arange(300_001, dtype=torch.float32) * 1.5  # mean of 1x and 2x
    for r in ranks:
        assert "error" not in r, r.get("error")
        torch.testing.assert_close(r["buffer"], want, rtol=1e-6, atol=0)
        assert r["slices"] == 3


def test_ranks_with_different_models_stop_with_a_clear_error(tmp_path):
    ranks = run_ranks("different_models", tmp_path)
    for r in ranks:
        assert "error" in r
        assert "combine_ddp: the ranks' models differ" in r["error"], r["error"]
        assert "rank 1: 6 tensors" in r["error"], r["error"]


def test_combine_ddp_without_a_process_group_is_a_clear_error():
    with pytest.raises(RuntimeError, match="init_process_group"):
        NpuAmpOptions("O2", combine_grad=True, combine_ddp=True)
    with pytest.raises(ValueError, match="combine_ddp=True needs combine_grad=True"):
        NpuAmpOptions("O2", combine_ddp=True)
    assert NpuAmpOptions("O2", combine_grad=True, combine_ddp=False, ddp_replica_count=8)
