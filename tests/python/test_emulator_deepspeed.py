"""DeepSpeed (torch 2.x) on 2 emulated NPUs: ZeRO stages 1, 2 and 3 over hccl, fp16 on a 910 and
bf16 on a 910B, through DeepSpeed's own NPU accelerator (picked because torch_npu imports) and
its NPU Adam (the FusedAdam builder for NPUs needs no compiling: it steps with
``torch._fused_adam_`` on the NPU tensors). One process pair per chip runs every configuration
in turn (overlay_support/deepspeed_worker.py), to keep the test short. The MLP's first block
runs under DeepSpeed's activation checkpointing, whose backward restores the NPU's RNG state
through ``torch.npu._lazy_call``. Stage 3 runs twice: with the model made as usual, and made
under ``zero.Init`` (partitioned on the NPUs as it is made, as transformers makes it).

Checked: the losses (mean over the ranks) follow an fp32 ``torch.optim.Adam`` run of the same
model, from the engine's initial parameters, on the whole batch within 1e-2 relative for fp16
(11 significant bits, 8 Adam steps of a small MLP; measured: 4e-3, 6e-3 after zero.Init) and
2e-2 for bf16 (8 bits; measured: 4e-3, 7e-3 after zero.Init); an engine that loads
the checkpoint saved at step 4 retrains steps 5-8 to the same losses, bit for bit (hccl sums in
rank order). fp16 loss scaling reads overflow from the gradients' values: on a 910B (INF/NAN
mode) DeepSpeed sees the inf, skips the step and lowers the scale; on a 910 (saturation) an
overflow is stored as ±65504, so DeepSpeed sees none, though the NPU's float status is raised
(DeepSpeed does not read it). DeepSpeed's NPU accelerator says float64 is supported, so ZeRO-3
all-reduces its gradient norm in float64, which HCCL (and so torch_npu) refuses on these chips:
the stage-3 runs tell DeepSpeed otherwise, and one run without that shows the refusal.
"""

import importlib.util
import json
import os

import pytest
import torch

import overlay_support
from overlay_support import ranks

pytestmark = [
    pytest.mark.skipif(
        int(torch.__version__.split(".")[0]) < 2,
        reason="DeepSpeed on the emulated NPU needs torch 2.x",
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("deepspeed") is None, reason="deepspeed is not installed"
    ),
]

HERE = os.path.dirname(overlay_support.__file__)
STEPS, SAVE_AT = 8, 4


def launch(worker, args, soc):
    env = overlay_support.overlay_env()
    for name in (
        "APEXNPU_HCCL_STRICT",
        "APEXNPU_INF_NAN_MODE",
        "ASCEND_HOME_PATH",
        "DS_ACCELERATOR",
        "GLOO_SOCKET_IFNAME",
    ):
        env.pop(name, None)
    env["APEXNPU_SOC_VERSION"] = soc
    results = ranks.launch([os.path.join(HERE, worker)] + args, 2, env, timeout=300)
    for r in results:
        assert r.returncode == 0, r
    return json.loads(results[0].stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both chips' runs, once: {soc: {spec: result}}."""
    out = {}
    for soc, specs in (
        ("Ascend910A", ["fp16:1", "fp16:2", "fp16:3", "fp16:3:init", "fp16:1:24", "fp16:3:fp64"]),
        ("Ascend910B1", ["bf16:1", "bf16:2", "bf16:3", "bf16:3:init", "fp16:2:24"]),
    ):
        ckpt = str(tmp_path_factory.mktemp("ds-" + soc))
        out[soc] = launch("deepspeed_worker.py", [ckpt] + specs, soc)
    return out


@pytest.mark.parametrize(
    "soc,dtype,tolerance", [("Ascend910A", "fp16", 1e-2), ("Ascend910B1", "bf16", 2e-2)]
)
@pytest.mark.parametrize("stage", ["1", "2", "3", "3:init"])
def test_zero_trains_as_fp32_adam_and_resumes(runs, soc, dtype, tolerance, stage):
    got = runs[soc][f"{dtype}:{stage}"]
    want = got["reference"]
    assert got["accelerator"] == "npu" and got["device"] == "npu:0"
    assert got["zero"] == (
        "DeepSpeedZeroOptimizer_Stage3" if stage.startswith("3") else "DeepSpeedZeroOptimizer"
    )
    assert got["basic"] == "FusedAdam"  # DeepSpeed's Adam for NPUs, not torch's
    assert got["param_dtype"] == f"torch.{'float16' if dtype == 'fp16' else 'bfloat16'}"
    assert got["skipped"] == 0
    assert len(got["losses"]) == STEPS
    for step, (a, b) in enumerate(zip(got["losses"], want)):
        assert abs(a - b) <= tolerance * b, (step, a, b)
    assert got["losses"][-1] < 0.75 * got["losses"][0]  # it trains
    assert got["loaded"] and got["resumed"] == got["losses"][SAVE_AT:]
    if soc == "Ascend910A":
        assert got["float_status"] is False  # nothing overflowed


def test_fp16_overflow_on_a_910b_skips_steps_and_lowers_the_scale(runs):
    got = runs["Ascend910B1"]["fp16:2:24"]  # initial loss scale 2**24: the gradients overflow
    assert got["param_dtype"] == "torch.float16"
    assert got["skipped"] >= 1 and got["scale"] < 2**24
    assert got["loaded"] and got["resumed"] == got["losses"][SAVE_AT:]


def test_fp16_overflow_on_a_910_saturates_unseen_by_deepspeed(runs):
    got = runs["Ascend910A"]["fp16:1:24"]
    # The gradients saturate at ±65504 instead of becoming inf: DeepSpeed's check of their
    # values finds nothing and steps; the float status, which it does not read, is raised.
    assert got["skipped"] == 0 and got["scale"] == 2**24
    assert got["float_status"] is True


def test_zero3_float64_norm_is_refused_by_hccl(runs):
    error = runs["Ascend910A"]["fp16:3:fp64"]["error"]
    assert error.startswith(
        "hccl: all_reduce of a torch.float64 tensor: HCCL on Ascend910A reduces only "
    ), error
