"""``accelerate launch --use_deepspeed`` on 2 emulated NPUs (torch 2.x, with transformers and
accelerate): a tiny LLaMA trained by accelerate's own loop under DeepSpeed ZeRO-2, in bf16 on
910Bs and in fp16 (DeepSpeed's loss scaling) on 910s
(overlay_support/deepspeed_accelerate_script.py). accelerate finds the NPUs through torch_npu,
launches its ranks with DeepSpeed's NPU accelerator over hccl, and the mean losses follow an
fp32 run of torch's AdamW on the whole batch within 2e-2 relative (bf16's 8 significant bits,
8 steps; measured: 6e-4 in bf16, 1e-3 in fp16). (ZeRO-3 stops at its float64 gradient norm,
which HCCL refuses: see test_emulator_deepspeed.py.)"""

import importlib.util
import os

import pytest
import torch

import overlay_support
from overlay_support import accelerate_runs

pytestmark = [
    pytest.mark.skipif(
        int(torch.__version__.split(".")[0]) < 2,
        reason="DeepSpeed on the emulated NPU needs torch 2.x",
    ),
    pytest.mark.skipif(
        not all(
            importlib.util.find_spec(name) for name in ("deepspeed", "accelerate", "transformers")
        ),
        reason="needs deepspeed, accelerate and transformers (the torch 2.x venv "
        "of scripts/torch2_venv.sh has them)",
    ),
]

SCRIPT = os.path.join(os.path.dirname(overlay_support.__file__), "deepspeed_accelerate_script.py")


@pytest.mark.parametrize("soc,precision", [("Ascend910B1", "bf16"), ("Ascend910A", "fp16")])
def test_accelerate_launch_with_deepspeed_zero2(tmp_path, soc, precision):
    results = accelerate_runs.launch(
        str(tmp_path),
        soc,
        SCRIPT,
        ["--use_deepspeed", "--zero_stage", "2", "--mixed_precision", precision],
    )
    assert [r["device"] for r in results] == ["npu:0", "npu:1"]
    for r in results:
        assert r["deepspeed"] and r["zero_stage"] == 2 and r["engine"] == "DeepSpeedEngine"
        assert r["mixed_precision"] == precision
        assert r["param_dtype"] == ("torch.bfloat16" if precision == "bf16" else "torch.float16")
    assert results[0]["losses"] == results[1]["losses"]  # the mean over the ranks, on each
    main = next(r for r in results if "reference" in r)
    for step, (a, b) in enumerate(zip(main["losses"], main["reference"])):
        assert abs(a - b) <= 2e-2 * b, (step, a, b)
    assert main["losses"][-1] < 0.9 * main["losses"][0]  # it trains
