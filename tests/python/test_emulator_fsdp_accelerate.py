"""``accelerate launch --use_fsdp`` on 2 emulated NPUs (torch 2.x, with transformers and
accelerate): a tiny LLaMA loaded with ``from_pretrained`` from a ``pytorch_model.bin`` (with
``cpu_ram_efficient_loading``, which reads it with ``map_location="meta"``, as FSDP recipes do)
and trained by accelerate's own loop under FSDP (FULL_SHARD, each decoder layer its own unit)
in fp16 on 910s, where accelerate takes torch's ShardedGradScaler, which is
torch_npu's once torch_npu is imported (overlay_support/fsdp_accelerate_script.py). The mean
losses follow an fp32 run of torch's AdamW on the whole batch within 2e-3 relative (fp16's 11
significant bits, 8 steps; measured: 2e-5). (bf16 and FSDP2 under accelerate run too; FSDP2 in
bf16 is tested without accelerate in test_emulator_fsdp.py.)"""

import importlib.util
import os

import pytest
import torch

import overlay_support
from overlay_support import accelerate_runs

pytestmark = [
    pytest.mark.skipif(
        int(torch.__version__.split(".")[0]) < 2,
        reason="torch 1.13 cannot import torch.distributed.fsdp on Python 3.11",
    ),
    pytest.mark.skipif(
        not all(importlib.util.find_spec(name) for name in ("accelerate", "transformers")),
        reason="needs accelerate and transformers (the torch 2.x venv of "
        "scripts/torch2_venv.sh has them)",
    ),
]

SCRIPT = os.path.join(os.path.dirname(overlay_support.__file__), "fsdp_accelerate_script.py")


def test_accelerate_launch_with_fsdp_in_fp16(tmp_path):
    results = accelerate_runs.launch(
        str(tmp_path),
        "Ascend910A",
        SCRIPT,
        [
            "--use_fsdp",
            "--fsdp_version",
            "1",
            "--fsdp_sharding_strategy",
            "FULL_SHARD",
            "--fsdp_cpu_ram_efficient_loading",
            "true",
            "--fsdp_sync_module_states",
            "true",
            "--fsdp_auto_wrap_policy",
            "TRANSFORMER_BASED_WRAP",
            "--fsdp_transformer_layer_cls_to_wrap",
            "LlamaDecoderLayer",
            "--mixed_precision",
            "fp16",
        ],
    )
    assert [r["device"] for r in results] == ["npu:0", "npu:1"]
    for r in results:
        assert r["fsdp"] and r["fsdp_version"] == 1 and r["model"] == "FullyShardedDataParallel"
        assert r["mixed_precision"] == "fp16" and r["param_device"] == r["device"]
        assert r["scaler"] == "torch_npu.npu.amp.sharded_grad_scaler"
        assert "meta" in r["load_locations"]  # transformers read the checkpoint's shapes so
    assert results[0]["losses"] == results[1]["losses"]  # the mean over the ranks, on each
    main = next(r for r in results if "reference" in r)
    for step, (a, b) in enumerate(zip(main["losses"], main["reference"])):
        assert abs(a - b) <= 2e-3 * b, (step, a, b)
    assert main["losses"][-1] < 0.9 * main["losses"][0]  # it trains
