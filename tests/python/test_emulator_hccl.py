"""``init_process_group("hccl")`` on the emulated NPU: real processes on gloo (loopback), HCCL's
rules on data types and devices per node, and their relaxation."""

import json
import os
import subprocess
import sys

import pytest

import overlay_support
from overlay_support import ranks

WORKER = os.path.join(os.path.dirname(overlay_support.__file__), "hccl_worker.py")


def run(scenario, world, per_node=None, **env):
    base = overlay_support.overlay_env()
    base.pop("APEXNPU_HCCL_STRICT", None)
    base.pop("GLOO_SOCKET_IFNAME", None)  # hccl binds to loopback by itself
    base.pop("APEXNPU_SOC_VERSION", None)  # a 910 (a 910B's rules: test_emulator_hccl_bf16.py)
    base.update(env)
    results = ranks.launch([WORKER, scenario], world, base, per_node=per_node, timeout=600)
    for r in results:
        assert r.returncode == 0 and r.stdout.strip(), r
    return [json.loads(r.stdout.strip().splitlines()[-1]) for r in results]


def test_apex_sends_through_hccl_the_dtypes_the_emulator_lets_through():
    """apex's collective_dtypes writes the dtypes every HCCL carries itself (Huawei's torch_npu
    names them nowhere public): the emulator must let them through every collective."""
    overlay_support.use_overlay()
    from apex.npu.ddp import collective_dtypes
    from torch_npu.distributed import hccl

    assert set(collective_dtypes.CARRIED) <= set(hccl.REDUCED_DTYPES) <= set(hccl.MOVED_DTYPES)


@pytest.mark.parametrize("scenario", ["collectives", "init_tcp"])
def test_collectives_give_gloo_results_under_the_hccl_name(scenario):
    world = 2
    out = run(scenario, world)
    for rank, got in enumerate(out):
        assert "error" not in got, got
        for dtype in ("float32", "float16", "int32", "int8", "int64"):
            assert got[f"all_reduce_torch.{dtype}"] == [3, 3, 3]
        # What only moves data may be of more types: the HF Trainer gathers its int64 FLOP
        # count, and torch_npu sends bool as uint8.
        for dtype in ("int64", "bool", "float64", "uint8"):
            want = (
                [[bool(r % 2)] * 2 for r in range(world)]
                if dtype == "bool"
                else [[r] * 2 for r in range(world)]
            )
            assert got[f"all_gather_torch.{dtype}"] == want
        assert got["broadcast"] == [0.0, 2.0, 4.0, 6.0]
        assert got["all_gather"] == [[0, 0], [1, 1]]
        assert got["all_gather_into_tensor"] == [0.0, 0.0, 1.0, 1.0]
        assert got["scatter"] == [10.0 * rank]
        assert got["reduce_scatter"] == [float(2 * rank + 1)]  # sum over r of (rank + r)
        assert got["all_to_all"] == [[10.0 * r + rank] for r in range(world)]
        assert got["all_to_all_bool"] == [[(r + rank) % 2 == 1] for r in range(world)]
        assert got["all_to_all_single"] == [10.0 * r + rank for r in range(world)]
        assert got["batch_isend_irecv"] == [float((rank - 1) % world)] * 2
        assert got["all_gather_object"] == [{"rank": 0}, {"rank": 1}]
        assert got["broadcast_object_list"] == [0, "x"]
        assert got["new_group"] == ["hccl", [2.0]]
        assert got["backend"] == "hccl" and got["is_hccl_available"] is True
    assert out[0]["reduce"] == [1.0, 1.0] and out[0]["gather"] == [[0.0], [1.0]]
    assert out[1]["send_recv"] == [7.0]


def test_float_sums_are_reduced_in_rank_order():
    # Gloo's ring would add in an order that depends on an element's place in its buffer.
    for got in run("ordered", 4):
        assert got and all(got.values()), got


def test_data_types_hccl_does_not_carry_are_refused():
    reduced = "int8, int32, int64, float16 and float32"
    moved = "int8, uint8, bool, int32, int64, float16, float32 and float64"
    for got in run("refusals", 2):
        assert set(got) == {
            "all_reduce_float64",
            "broadcast_bfloat16",
            "all_gather_bfloat16",
            "reduce_scatter_uint8",
            "isend_bfloat16",
        }
        for call, dtype, rule in (
            ("all_reduce", "torch.float64", "reduces only " + reduced),
            ("broadcast", "torch.bfloat16", "moves only " + moved),
            ("all_gather", "torch.bfloat16", "moves only " + moved),
            ("reduce_scatter", "torch.uint8", "reduces only " + reduced),
            ("isend", "torch.bfloat16", "moves only " + moved),
        ):
            err = got[f"{call}_{dtype.split('.')[1]}"]
            assert err is not None, call
            assert err[0] == "TypeError"
            assert err[1].startswith(
                f"hccl: {call} of a {dtype} tensor: HCCL on Ascend910A {rule} "
            ), err
            assert "APEXNPU_HCCL_STRICT=0" in err[1]


def test_all_gather_takes_outputs_of_the_inputs_number_of_elements():
    # HCCL (as NCCL) gathers into one flat buffer: only the element counts must agree. Gloo
    # alone refuses Ascend's combine_ddp, which gathers a 0-d count into 1-element tensors.
    grids = [[[10.0 * r + 3 * i + j for j in range(3)] for i in range(2)] for r in range(2)]
    for got in run("gather_shapes", 2):
        assert "error" not in got, got
        assert got["scalar_into_1"] == [[1.0], [2.0]]
        assert got["2x3_into_6"] == [sum(g, []) for g in grids]
        assert got["2x3_into_strided_3x2"] == [
            [row[2 * k : 2 * k + 2] for k in range(3)] for row in (sum(g, []) for g in grids)
        ]
        kind, message = got["2_into_3"]
        assert kind == "RuntimeError"
        assert message == (
            "hccl: all_gather of a (2,) tensor into a (3,) one: all tensor "
            "operands to scatter/gather must have the same number of elements"
        )


def test_any_dtype_moves_as_bits_hccl_carries():
    import torch

    out = run("bits", 2)
    assert out[0] == out[1]
    for dtype in ("int64", "float64", "bool", "bfloat16", "uint8", "int16"):
        want = (torch.arange(5) * 3).to(getattr(torch, dtype)).tolist()
        assert out[1]["torch." + dtype] == want, dtype  # rank 0's values, bit for bit
    assert out[1]["scalar"] == 7


def test_the_rules_can_be_relaxed():
    for got in run("relaxed", 2, APEXNPU_HCCL_STRICT="0"):
        assert got == {"all_reduce_float64": [3.0, 3.0]}
    env = dict(overlay_support.overlay_env(), APEXNPU_HCCL_STRICT="maybe")
    for r in ranks.launch([WORKER, "relaxed"], 2, env, timeout=600):  # refused at import
        assert r.returncode != 0 and "APEXNPU_HCCL_STRICT='maybe': expected 1" in r.stderr


@pytest.mark.parametrize(
    "world,per_node,ok", [(3, None, False), (4, None, True), (4, 2, True), (3, 3, False)]
)
def test_devices_per_node_follow_hccl_allocation(world, per_node, ok):
    out = run("init", world, per_node=per_node)
    if ok:
        assert all(got == {"backend": "hccl", "world": world} for got in out)
    else:
        for got in out:
            assert got["error"] == "ValueError", got
            assert got["message"].startswith(
                f"init_process_group('hccl'): {per_node or world} "
                "processes per node: HCCL allocates 1, 2, 4 or 8"
            )


@pytest.mark.parametrize("per_node", [None, 3])
def test_a_refused_allocation_is_refused_before_meeting_the_other_ranks(per_node):
    """Every rank refuses at once: had the check waited for the rendezvous, a rank started
    after rank 0 had refused would wait for it forever. Rank 1 of 3, alone, proves it: the
    rendezvous it would wait for never completes."""
    env = dict(
        overlay_support.overlay_env(),
        RANK="1",
        WORLD_SIZE="3",
        LOCAL_RANK="1",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(ranks.free_port()),
        OMP_NUM_THREADS="1",
    )
    env.pop("APEXNPU_HCCL_STRICT", None)
    env.pop("LOCAL_WORLD_SIZE", None)
    if per_node:
        env["LOCAL_WORLD_SIZE"] = str(per_node)
    r = subprocess.run(
        [sys.executable, WORKER, "init_alone"], env=env, capture_output=True, text=True, timeout=600
    )
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["error"] == "ValueError", got
    assert got["message"].startswith("init_process_group('hccl'): 3 processes per node: HCCL")


def test_three_processes_per_node_are_allowed_when_relaxed():
    out = run("init", 3, APEXNPU_HCCL_STRICT="0")
    assert all(got == {"backend": "hccl", "world": 3} for got in out)


def test_gloo_gets_aliases_without_python_state():
    """gloo's worker threads drop their tensors when a work ends, maybe while the interpreter
    finalises: a tensor with Python state (an NPU tensor's mark) then needs the GIL, and CPython
    ends the thread through frames that do not unwind (a rank aborted at exit, "terminate
    called without an active exception"). What hccl hands gloo is plain aliases."""
    out = overlay_support.run_with_emulator("""
        import torch, torch_npu
        from torch_npu.distributed import hccl_group
        x = torch.arange(6.0, device="npu")
        b = torch.ones(4, dtype=torch.bool, device="npu")
        carried = hccl_group._carried([x, b])
        plain = hccl_group._plain([x])[0]
        print(x.__dict__ != {}, [t.__dict__ for t in carried] + [plain.__dict__],
              carried[0].data_ptr() == x.data_ptr() == plain.data_ptr(),
              carried[1].dtype, plain.dtype)
    """)
    assert out == ["True", "[{},", "{},", "{}]", "True", "torch.uint8", "torch.float32"]
