"""The communication switches under torch DDP on the emulated NPU (hccl over gloo, real
processes): an unchanged training script (overlay_support/comm_worker.py, torch SGD with
momentum, fp32) run with APEXNPU_FP16_COMPRESSION, APEXNPU_POWERSGD_COMPRESSION (+ its rank and
APEXNPU_START_COMPRESS_ITER) or APEXNPU_HIERARCHICAL_ALLREDUCE, on 2 and 4 processes, against the
same script with none set (DDP's own flat all-reduce). combine_ddp's are in
test_overlay_amp_e2e (they need apex.amp).

What must hold, every step of 8: the ranks hold the same parameters bit for bit, and
- fp16 compression: within rtol 1e-3, atol 1e-4 of the flat run (gradients rounded to fp16's
  11-bit significand, ~5e-4 relative, each step);
- hierarchical all-reduce: within rtol 1e-5, atol 1e-6 (the same fp32 sums in another order);
- PowerSGD (rank 1, start 3): bit-identical to the flat run before step 3 (a plain all-reduce),
  different from it from step 3 on (compressed), and within atol 5e-2 (a rank-1 approximation
  with error feedback; the parameters are ~0.1-0.3).
The inter-node bytes are counted in the groups (ring model, see apex.npu.ddp.counted_group) and
must be the ring's exactly.
"""

import os

import pytest

import overlay_support
from overlay_support import comm_runs

SRC = os.path.join(overlay_support.REPO_ROOT, "src")
# (processes, processes per node): 2 on two nodes of one, 4 on two nodes of two.
LAYOUTS = [(2, 1), (4, 2)]


def env():
    e = overlay_support.overlay_env()
    e["PYTHONPATH"] = SRC + os.pathsep + e["PYTHONPATH"]
    return e


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    out = tmp_path_factory.mktemp("flat")
    return {layout: comm_runs.run(out, "ddp", *layout, env()) for layout in LAYOUTS}


@pytest.mark.parametrize("world,per_node", LAYOUTS)
def test_fp16_compression(tmp_path, flat, world, per_node):
    got = comm_runs.run(tmp_path, "ddp", world, per_node, env(), APEXNPU_FP16_COMPRESSION="1")
    comm_runs.assert_ranks_identical(got)
    comm_runs.assert_close(got, flat[world, per_node], rtol=1e-3, atol=1e-4)
    assert comm_runs.max_difference(got, flat[world, per_node]) > 0  # it did compress
    # Flat ring over the world: a rank whose successor is on another node sends 2(k-1)/k of the
    # fp16 buffer across each step.
    per_step = comm_runs.PARAMS * 2 * 2 * (world - 1) // world
    crossing = [(r + 1) % world // per_node != r // per_node for r in range(world)]
    assert [r["internode_bytes"] for r in got] == [
        comm_runs.STEPS * per_step if c else 0 for c in crossing
    ]


@pytest.mark.parametrize("world,per_node", LAYOUTS)
def test_powersgd_starts_at_its_iteration(tmp_path, flat, world, per_node):
    got = comm_runs.run(
        tmp_path,
        "ddp",
        world,
        per_node,
        env(),
        APEXNPU_POWERSGD_COMPRESSION="1",
        APEXNPU_START_COMPRESS_ITER="3",
    )
    comm_runs.assert_ranks_identical(got)
    want = flat[world, per_node]
    assert comm_runs.max_difference(got, want, range(3)) == 0
    assert all(comm_runs.max_difference(got, want, [s]) > 0 for s in range(3, comm_runs.STEPS))
    comm_runs.assert_close(got, want, rtol=0, atol=5e-2)


@pytest.mark.parametrize("world,per_node", LAYOUTS)
def test_hierarchical_allreduce(tmp_path, flat, world, per_node):
    got = comm_runs.run(tmp_path, "ddp", world, per_node, env(), APEXNPU_HIERARCHICAL_ALLREDUCE="1")
    comm_runs.assert_ranks_identical(got)
    comm_runs.assert_close(got, flat[world, per_node], rtol=1e-5, atol=1e-6)
    # Only the node leaders send across: a ring of the two leaders moves the whole fp32 buffer.
    leaders = [r % per_node == 0 for r in range(world)]
    assert [r["internode_bytes"] for r in got] == [
        comm_runs.STEPS * comm_runs.PARAMS * 4 if lead else 0 for lead in leaders
    ]


def test_all_three_together_on_two_nodes_of_two(tmp_path, flat):
    got = comm_runs.run(
        tmp_path,
        "ddp",
        4,
        2,
        env(),
        APEXNPU_FP16_COMPRESSION="1",
        APEXNPU_POWERSGD_COMPRESSION="1",
        APEXNPU_START_COMPRESS_ITER="3",
        APEXNPU_MATRIX_APPROXIMATION_RANK="2",
        APEXNPU_HIERARCHICAL_ALLREDUCE="1",
    )
    comm_runs.assert_ranks_identical(got)
    # Before PowerSGD starts: fp16 over the hierarchy; then rank-2 PowerSGD in fp16.
    comm_runs.assert_close(got, flat[4, 2], rtol=0, atol=5e-2)
    assert comm_runs.max_difference(got, flat[4, 2], range(3)) < 1e-4


def test_bad_values_are_refused():
    code = """
        import os
        from apex.npu.ddp import comm_settings
        for name, value in [("APEXNPU_FP16_COMPRESSION", "yes"),
                            ("APEXNPU_MATRIX_APPROXIMATION_RANK", "0"),
                            ("APEXNPU_START_COMPRESS_ITER", "x")]:
            os.environ[name] = value
            try:
                comm_settings.from_environment()
            except ValueError as e:
                print(name in str(e))
            del os.environ[name]
        os.environ["APEXNPU_POWERSGD_COMPRESSION"] = "1"
        os.environ["APEXNPU_START_COMPRESS_ITER"] = "1"
        try:
            comm_settings.from_environment()
        except ValueError as e:
            print(">= 2" in str(e))
        del os.environ["APEXNPU_POWERSGD_COMPRESSION"], os.environ["APEXNPU_START_COMPRESS_ITER"]
        print(comm_settings.from_environment())
    """
    out = overlay_support.run_with_emulator(code)
    assert out[:4] == ["True"] * 4, out
    assert " ".join(out[4:]) == (
        "CommSettings(fp16=False, powersgd=False, rank=1, start_iter=1000, hierarchical=False)"
    )
