"""hccl collectives whose ranks disagree are refused on every rank, and waits are bounded as
HCCL bounds them (HCCL_EXEC_TIMEOUT, HCCL_CONNECT_TIMEOUT, or the timeout a script gives).

Two real processes over the emulated hccl (gloo on loopback); each launch is bounded by its own
timeout, so a rank that hangs fails the test instead of stalling the suite."""

import datetime
import json
import os
import subprocess
import sys

import pytest

import overlay_support
from overlay_support import ranks

WORKER = os.path.join(os.path.dirname(overlay_support.__file__), "hccl_agreement_worker.py")
LAUNCH_TIMEOUT = 240  # seconds a launch may take (two ranks importing torch on a busy machine)
SLACK = 15  # seconds past a bound that a busy machine may add before the error is seen


def _env(**extra):
    env = overlay_support.overlay_env()
    for name in (
        "APEXNPU_HCCL_STRICT",
        "GLOO_SOCKET_IFNAME",
        "APEXNPU_SOC_VERSION",
        "HCCL_EXEC_TIMEOUT",
        "HCCL_CONNECT_TIMEOUT",
        "INIT_TIMEOUT",
    ):
        env.pop(name, None)
    env.update(extra)
    return env


def run(scenario, **extra):
    results = ranks.launch([WORKER, scenario], 2, _env(**extra), timeout=LAUNCH_TIMEOUT)
    for r in results:  # no rank aborted (gloo's SIGABRT) or hung
        assert r.returncode == 0 and r.stdout.strip(), r
    out = [json.loads(r.stdout.strip().splitlines()[-1]) for r in results]
    for got in out:
        assert "error" not in got, got
    return out


SAME_ELEMENTS = "every rank must pass as many elements of the same dtype"


def test_mismatched_collectives_are_refused_on_every_rank():
    out = run("mismatches")
    both = {case: [out[0][case], out[1][case]] for case in out[0]}

    def refused_alike(case, message):
        for verdict in both[case]:
            assert verdict == ["RuntimeError", message], (case, verdict)

    refused_alike(
        "all_reduce_int_sizes",
        "hccl: all_reduce refused on every rank: the ranks pass different tensors: "
        "rank 0 passes an int32 tensor of shape (4,) (4 elements), rank 1 passes an "
        f"int32 tensor of shape (3,) (3 elements); {SAME_ELEMENTS}",
    )
    refused_alike(
        "all_reduce_dtypes",
        "hccl: all_reduce refused on every rank: the ranks pass different tensors: "
        "rank 0 passes a float32 tensor of shape (3,) (3 elements), rank 1 passes an "
        f"int32 tensor of shape (3,) (3 elements); {SAME_ELEMENTS}",
    )
    for case, call in (
        ("all_reduce_float_sizes", "all_reduce"),
        ("broadcast_sizes", "broadcast"),
        ("broadcast_int_dtypes", "broadcast"),
        ("all_gather_sizes", "all_gather"),
        ("reduce_scatter_tensor_sizes", "reduce_scatter_tensor"),
    ):
        message = both[case][0][1]
        assert message.startswith(
            f"hccl: {call} refused on every rank: the ranks pass different tensors: rank 0 passes "
        ), (case, message)
        assert message.endswith(SAME_ELEMENTS), (case, message)
        refused_alike(case, message)
    assert "rank 0 passes an int64 tensor" in both["broadcast_int_dtypes"][0][1]
    assert "rank 1 passes an int32 tensor" in both["broadcast_int_dtypes"][0][1]
    assert (
        "(4 elements), rank 1 passes a float32 tensor of shape (6,) (6 elements)"
        in both["broadcast_sizes"][0][1]
    )
    refused_alike(
        "broadcast_roots",
        "hccl: broadcast refused on every rank: the ranks name "
        "different roots: rank 0 names rank 0, rank 1 names rank 1",
    )
    refused_alike(
        "reduce_roots",
        "hccl: reduce refused on every rank: the ranks name different "
        "roots: rank 0 names rank 0, rank 1 names rank 1",
    )
    refused_alike(
        "reduce_scatter_sizes",
        "hccl: reduce_scatter refused on every rank: the ranks' tensors do not fit each "
        "other: rank 0 sends 2 elements to rank 1, which expects 3 from it, rank 1 "
        "sends 3 elements to rank 0, which expects 2 from it; what a rank sends must "
        "fill what its peer receives",
    )
    refused_alike(
        "all_to_all_sizes",
        "hccl: all_to_all refused on every rank: the ranks' tensors do not fit each "
        "other: rank 0 sends 2 elements to rank 1, which expects 1 from it; what a rank "
        "sends must fill what its peer receives",
    )
    refused_alike(
        "gather_sizes",
        "hccl: gather refused on every rank: the ranks pass different tensors: rank 0 "
        "passes a float32 tensor of shape (1,) (1 element), rank 1 passes a float32 "
        f"tensor of shape (2,) (2 elements); {SAME_ELEMENTS}",
    )
    refused_alike(
        "scatter_roots",
        "hccl: scatter refused on every rank: the ranks name "
        "different roots: rank 0 names rank 0, rank 1 names rank 1",
    )
    refused_alike(
        "all_to_all_single_splits",
        "hccl: all_to_all_single refused on every rank: the ranks' tensors do not fit "
        "each other: rank 0 sends 2 elements to rank 1, which expects 3 from it; what a "
        "rank sends must fill what its peer receives",
    )
    refused_alike(
        "out_of_step",
        "hccl: collectives out of step, refused on every rank: rank 0 "
        "calls all_reduce, rank 1 calls broadcast; every rank must call "
        "the same collectives in the same order",
    )
    refused_alike(
        "barrier_against_all_reduce",
        "hccl: collectives out of step, refused on every rank: rank 0 calls barrier, "
        "rank 1 calls all_reduce; every rank must call the same collectives in the "
        "same order",
    )
    # A rank's own refusal: it raises its own error; its peer learns of it and fails too.
    rank0, rank1 = both["all_gather_into_tensor_output"]
    assert rank1 == [
        "RuntimeError",
        "hccl: all_gather_into_tensor of 2 elements into 5: the "
        "output must hold the group's size (2) times the input's elements",
    ]
    assert rank0 == [
        "RuntimeError",
        "hccl: all_gather_into_tensor refused on every rank: rank 1 "
        "refused it, passing tensors that do not fit together (its own error says "
        "which)",
    ]
    rank0, rank1 = both["one_rank_refuses_dtype"]
    assert rank0[0] == "TypeError"
    assert rank0[1].startswith("hccl: all_reduce of a torch.float64 tensor: HCCL on Ascend910A")
    assert rank1 == [
        "RuntimeError",
        "hccl: all_reduce refused on every rank: rank 0 refused it, "
        "passing a dtype its HCCL does not carry in this collective (its own error "
        "says which)",
    ]
    # HCCL counts elements: a (2, 3) and a (6,) all_reduce agree, and are summed.
    assert both["all_reduce_shapes"] == [["ok", [[2.0] * 3] * 2], ["ok", [2.0] * 6]]
    # A refusal moved no data: the group still works, and sums right.
    assert both["after"] == [["ok", [3, 3, 3]], ["ok", [3, 3, 3]]]


@pytest.mark.parametrize("how", ["HCCL_EXEC_TIMEOUT", "timeout="])
def test_a_stalled_rank_makes_the_other_fail_within_the_bound(how):
    """Rank 1 stalls 3 bounds long before its all_reduce: rank 0 fails after the bound, with an
    error naming it, not after torch's 30 minutes; rank 1 then finds rank 0 gone and fails too.
    The bound is HCCL_EXEC_TIMEOUT (a 910B takes any count of seconds), or the timeout given to
    init_process_group, which wins over it."""
    bound = 4
    if how == "timeout=":
        extra = dict(HCCL_EXEC_TIMEOUT="600", INIT_TIMEOUT=str(bound))
        named = f"timeout={datetime.timedelta(seconds=bound)} given to init_process_group"
    else:
        extra = dict(HCCL_EXEC_TIMEOUT=str(bound))
        named = f"HCCL_EXEC_TIMEOUT={bound} s"
    out = run("stall", APEXNPU_SOC_VERSION="Ascend910B1", STALL_SECONDS=str(3 * bound), **extra)
    kind, message = out[0]["all_reduce"]
    assert kind == "RuntimeError"
    assert message.startswith(
        f"hccl: all_reduce timed out waiting for the other ranks of the "
        f"group after {named}: a rank has stalled"
    ), message
    assert bound - 0.5 <= out[0]["seconds"] < bound + SLACK, out[0]
    kind, message = out[1]["all_reduce"]
    assert kind == "RuntimeError" and message.startswith("hccl: all_reduce "), message


def _alone(**extra):
    """Rank 0 of 2, whose peer never comes."""
    env = _env(
        RANK="0",
        WORLD_SIZE="2",
        LOCAL_RANK="0",
        LOCAL_WORLD_SIZE="2",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(ranks.free_port()),
        OMP_NUM_THREADS="1",
        **extra,
    )
    r = subprocess.run(
        [sys.executable, WORKER, "connect_alone"],
        env=env,
        capture_output=True,
        text=True,
        timeout=LAUNCH_TIMEOUT,
    )
    assert r.returncode == 0 and r.stdout.strip(), r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_group_whose_peer_never_comes_fails_after_hccl_connect_timeout():
    # HCCL takes 120 s at least; relaxed, the emulator takes the seconds as given.
    got = _alone(HCCL_CONNECT_TIMEOUT="3", APEXNPU_HCCL_STRICT="0")
    kind, message = got["init"]
    assert kind == "RuntimeError"
    assert message.startswith(
        "hccl: the group was not made within HCCL_CONNECT_TIMEOUT=3 s: a rank did not come"
    ), message
    assert 2.5 <= got["seconds"] < 3 + SLACK, got


def test_a_timeout_given_to_init_process_group_wins_over_hccl_connect_timeout():
    got = _alone(HCCL_CONNECT_TIMEOUT="7200", INIT_TIMEOUT="3")
    kind, message = got["init"]
    assert kind == "RuntimeError"
    assert message.startswith(
        "hccl: the group was not made within timeout=0:00:03 given to "
        "init_process_group: a rank did not come"
    ), message
    assert 2.5 <= got["seconds"] < 3 + SLACK, got


@pytest.fixture
def timeouts(monkeypatch):
    """hccl_timeouts on a chosen chip, the variables unset."""
    overlay_support.use_overlay()
    from torch_npu._device import soc
    from torch_npu.distributed import hccl_timeouts

    for name in ("HCCL_EXEC_TIMEOUT", "HCCL_CONNECT_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    previous = soc.select("Ascend910A")
    yield hccl_timeouts, soc
    soc.select(previous)


def _seconds(bound):
    return bound.timeout.total_seconds()


def test_exec_timeout_on_a_910_counts_in_steps_of_68_seconds(timeouts, monkeypatch):
    hccl_timeouts, _ = timeouts
    assert _seconds(hccl_timeouts.exec_bound(True)) == 1836  # HCCL's default, 27 steps
    for given, waited in (("600", 544), ("68", 68), ("1", 68), ("17340", 17340)):
        monkeypatch.setenv("HCCL_EXEC_TIMEOUT", given)
        bound = hccl_timeouts.exec_bound(True)
        assert _seconds(bound) == waited
        assert bound.source.startswith(f"HCCL_EXEC_TIMEOUT={given} ({waited} s on Ascend910A")
    for given in ("0", "17341", "-5", "ten"):
        monkeypatch.setenv("HCCL_EXEC_TIMEOUT", given)
        with pytest.raises(
            ValueError,
            match=rf"^HCCL_EXEC_TIMEOUT='{given}': expected whole "
            r"seconds in \(0, 17340\] on Ascend910A",
        ):
            hccl_timeouts.exec_bound(True)
    monkeypatch.setenv("HCCL_EXEC_TIMEOUT", "5")  # relaxed: as given
    assert _seconds(hccl_timeouts.exec_bound(False)) == 5


def test_exec_timeout_on_a_910b_takes_any_seconds_and_0_for_no_bound(timeouts, monkeypatch):
    hccl_timeouts, soc = timeouts
    soc.select("Ascend910B1")
    assert _seconds(hccl_timeouts.exec_bound(True)) == 1836
    monkeypatch.setenv("HCCL_EXEC_TIMEOUT", "5")
    assert _seconds(hccl_timeouts.exec_bound(True)) == 5
    monkeypatch.setenv("HCCL_EXEC_TIMEOUT", "0")
    assert hccl_timeouts.exec_bound(True).timeout == hccl_timeouts.NO_BOUND
    monkeypatch.setenv("HCCL_EXEC_TIMEOUT", "2147483648")
    with pytest.raises(
        ValueError,
        match=r"expected whole seconds in \[0, 2147483647\] on "
        r"Ascend910B1 \(0: no bound\)",
    ):
        hccl_timeouts.exec_bound(True)


def test_connect_timeout_is_120_to_7200_seconds_and_hccl_waits_20_more(timeouts, monkeypatch):
    hccl_timeouts, _ = timeouts
    assert _seconds(hccl_timeouts.connect_bound(True)) == 140
    monkeypatch.setenv("HCCL_CONNECT_TIMEOUT", "7200")
    assert _seconds(hccl_timeouts.connect_bound(True)) == 7220
    for given in ("119", "7201", "2.5"):
        monkeypatch.setenv("HCCL_CONNECT_TIMEOUT", given)
        with pytest.raises(
            ValueError,
            match=rf"^HCCL_CONNECT_TIMEOUT='{given}': expected whole "
            r"seconds in \[120, 7200\]",
        ):
            hccl_timeouts.connect_bound(True)
    monkeypatch.setenv("HCCL_CONNECT_TIMEOUT", "3")
    assert _seconds(hccl_timeouts.connect_bound(False)) == 3
    monkeypatch.setenv("HCCL_CONNECT_TIMEOUT", "0")
    with pytest.raises(ValueError, match="expected whole seconds above 0"):
        hccl_timeouts.connect_bound(False)
