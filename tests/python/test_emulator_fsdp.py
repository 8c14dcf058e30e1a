"""FSDP on emulated NPUs, 2 ranks over hccl (overlay_support/fsdp_worker.py): torch's
FullyShardedDataParallel with ``device_id`` an NPU and ``sync_module_states``, FULL_SHARD and
SHARD_GRAD_OP, fp16 mixed precision with torch_npu's ShardedGradScaler (a 910's float status;
a 910B's inf; gradients offloaded to the host), bf16 mixed precision on a 910B, sharded and
full state dicts saved and loaded, and torch 2.x's ``fully_shard`` on
``init_device_mesh("npu", ...)`` (fp32, bf16, and fp16 with the scaler).

Each run is checked against one process training the same model in fp32 on both ranks' batches
(what averaging the ranks' gradients computes): fp32 within 1e-5 (relative for losses, absolute
for parameters of magnitude below 1: only the order of the sums differs), fp16 within 2e-3
(fp16 keeps 11 significant bits) and bf16 within 1e-2 (8 bits), over 5 SGD steps with momentum.
Every rank ends with the same parameters, bit for bit.

torch 1.13 (Debian's) cannot import torch.distributed.fsdp on Python 3.11 (a dataclass in its
sharded tensors is refused), so these tests run on torch 2.x only."""

import json
import os

import pytest
import torch

import overlay_support
from overlay_support import ranks

try:
    import torch.distributed.fsdp  # noqa: F401

    FSDP_SKIP = None
except (ImportError, ValueError) as error:  # torch 1.13 on Python 3.11: ValueError
    FSDP_SKIP = f"torch {torch.__version__} cannot import torch.distributed.fsdp: {error}"

pytestmark = pytest.mark.skipif(FSDP_SKIP is not None, reason=FSDP_SKIP or "")

WORKER = os.path.join(os.path.dirname(overlay_support.__file__), "fsdp_worker.py")
FP32, FP16, BF16 = 1e-5, 2e-3, 1e-2
SKIPPED_STEPS = [2, 4]  # the worker's SKIPPED


def run(phases, tmp_path, soc):
    env = overlay_support.overlay_env()
    for name in ("APEXNPU_HCCL_STRICT", "GLOO_SOCKET_IFNAME", "APEXNPU_INF_NAN_MODE"):
        env.pop(name, None)
    env["APEXNPU_SOC_VERSION"] = soc
    results = ranks.launch([WORKER, ",".join(phases), str(tmp_path)], 2, env, timeout=600)
    by_phase = {}
    for r in results:
        assert r.returncode == 0, r
        with open(tmp_path / f"rank{r.rank}.jsonl") as lines:
            for line in lines:
                report = json.loads(line)
                by_phase.setdefault(report["phase"], {})[report["rank"]] = report
    return by_phase


@pytest.fixture(scope="module")
def on_910(tmp_path_factory):
    return run(
        [
            "full_shard",
            "shard_grad_op",
            "fp16",
            "fp16_offload",
            "state_dict",
            "fsdp2",
            "fsdp2_fp16",
        ],
        tmp_path_factory.mktemp("fsdp910"),
        "Ascend910A",
    )


@pytest.fixture(scope="module")
def on_910b(tmp_path_factory):
    return run(["bf16", "fsdp2_bf16", "fp16"], tmp_path_factory.mktemp("fsdp910b"), "Ascend910B1")


def assert_follows(run, reference, tolerance):
    """Both ranks: the same parameters; losses and parameters within ``tolerance`` of the
    reference's; and the model learns."""
    assert run[0]["params"] == run[1]["params"]
    assert run[0]["losses"] == run[1]["losses"]  # the mean over the ranks, on each
    for step, (got, want) in enumerate(zip(run[0]["losses"], reference["losses"])):
        assert abs(got - want) <= tolerance * want, (step, got, want)
    for got, want in zip(run[0]["params"], reference["params"]):
        assert max(abs(a - b) for a, b in zip(got, want)) <= tolerance
    losses = run[0]["losses"]
    assert losses[-1] < 0.8 * losses[0]


@pytest.mark.parametrize("strategy", ["full_shard", "shard_grad_op"])
def test_fsdp1_fp32_follows_one_process(on_910, strategy):
    run = on_910[strategy]
    # sync_module_states: rank 1 was built with another seed, yet both follow rank 0's model
    assert_follows(run, on_910["reference"][0], FP32)
    assert run[0]["dtype"] == "torch.float32"
    total = sum(len(p) for p in on_910["reference"][0]["params"])
    shard = sum(shape[0] for shape in run[0]["flat_shapes"])
    assert total / 2 <= shard < total / 2 + 3 * 2  # half of every unit, padded to even


@pytest.mark.parametrize(
    "chip,phase",
    [("910", "fp16"), ("910b", "fp16"), ("910", "fp16_offload"), ("910", "fsdp2_fp16")],
)
def test_fsdp1_fp16_with_sharded_grad_scaler_skips_overflows_on_every_rank(
    on_910, on_910b, chip, phase
):
    runs = on_910 if chip == "910" else on_910b
    run = runs[phase]
    assert run[0]["scaler"] == "torch_npu.npu.amp.sharded_grad_scaler"
    for rank in (0, 1):  # CPUOffload: the scaler unscales the host's gradients
        if phase != "fsdp2_fp16":  # (FSDP2's are DTensors, whose device is checked below)
            assert run[rank]["grad_devices"] == [
                "cpu" if phase == "fp16_offload" else f"npu:{rank}"
            ]
    assert run[0]["dtype"] == "torch.float16"
    for rank in (0, 1):
        # only rank 1 overflowed, at both steps; every rank skipped them and backed off
        assert run[rank]["stepped"] == [s not in SKIPPED_STEPS for s in range(5)]
        assert run[rank]["scales"] == [65536.0, 65536.0, 32768.0, 32768.0, 16384.0]
    assert_follows(run, runs["reference_skipping"][0], FP16)


def test_fsdp1_bf16_mixed_precision_on_a_910b(on_910b):
    run = on_910b["bf16"]
    assert run[0]["dtype"] == "torch.bfloat16"
    assert_follows(run, on_910b["reference"][0], BF16)


def test_fsdp1_sharded_and_full_state_dicts_save_and_load(on_910):
    for rank in (0, 1):
        result = on_910["state_dict"][rank]
        assert result["sharded_types"] == ["ShardedTensor"]
        # a fresh FSDP model from the sharded (torch.save or torch.distributed.checkpoint) or
        # the full checkpoint, and a plain module from the full one, compute what the trained
        # model computes, bit for bit
        assert result["sharded"] == result["full"] == result["plain"] == result["dcp"] == 0.0
    assert on_910["state_dict"][0]["keys"] == [
        "0.bias",
        "0.weight",
        "2.bias",
        "2.weight",
        "3.bias",
        "3.weight",
    ]


@pytest.mark.parametrize(
    "phase,chip,tolerance", [("fsdp2", "910", FP32), ("fsdp2_bf16", "910b", BF16)]
)
def test_fsdp2_fully_shard_on_an_npu_mesh(on_910, on_910b, phase, chip, tolerance):
    runs = on_910 if chip == "910" else on_910b
    run = runs[phase]
    for rank in (0, 1):
        assert run[rank]["mesh"] == ["npu", "npu"]
        assert run[rank]["param_type"] == "DTensor"
        assert run[rank]["param_device"] == run[rank]["local_device"] == f"npu:{rank}"
        assert run[rank]["local_shape"] == [16, 16]  # half of the first Linear's weight
    assert run[0]["dtype"] == ("torch.float32" if phase == "fsdp2" else "torch.bfloat16")
    assert_follows(run, runs["reference"][0], tolerance)
