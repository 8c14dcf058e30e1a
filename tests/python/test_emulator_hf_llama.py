"""A LLaMA-style causal LM fine-tuned by the Hugging Face Trainer on the emulated NPU, as
Ascend's LLM guides run it (``import torch_npu`` and ``transfer_to_npu``): fp16 on a 910 and
bf16 on a 910B, with each attention transformers has for the NPU (``eager``, ``sdpa``, and
``flash_attention_2``, which transformers runs as ``torch_npu.npu_fusion_attention``), gradient
checkpointing (reentrant, transformers' default, and not) and PEFT's LoRA.

The model is tiny with random weights (no hub: HF_HUB_OFFLINE=1) and learns a token pattern in
ten steps. Each mixed-precision run is checked against the same run in fp32: the losses fall,
and at every step they match fp32's within 5e-3 (fp16, 11 significant bits) or 2e-2 (bf16, 8
bits: about 4e-3 per rounding, over a few roundings) of a loss near 4. A run whose steps the
GradScaler skipped (an overflow seen where there was none) does not learn, and fails.

Needs transformers, accelerate and peft, which scripts/torch2_venv.sh installs beside torch
2.x; skipped where they are missing (Debian's torch 1.13 has none)."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

import overlay_support

NEEDED = ("transformers", "accelerate", "peft")
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in NEEDED),
    reason="the LLaMA Trainer test needs transformers, accelerate and peft "
    "(scripts/torch2_venv.sh installs them in the torch 2.x venv)",
)

TOLERANCE = {"fp16": 5e-3, "bf16": 2e-2}
DTYPE = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
# How far the loss falls in ten steps: from 4.03 to 3.54 in fp32, to 3.82 with LoRA (rank 16).
LEARNED = {False: 0.3, True: 0.15}

SCRIPT = textwrap.dedent('''
    import json, sys
    import torch
    import torch_npu
    from torch_npu.contrib import transfer_to_npu  # noqa: F401
    import transformers.integrations.npu_flash_attention as npu_flash_attention
    from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

    attention_dtypes = set()  # the dtypes attention computed in, during one run

    def recording(attend):
        def call(*args, **kwargs):
            out = attend(*args, **kwargs)
            first = out[0] if isinstance(out, (tuple, list)) else out
            attention_dtypes.add(str(first.dtype).replace("torch.", ""))
            return out
        return call

    # flash_attention_2 on the NPU, and sdpa's call (which autocast meets inside the wrapper).
    npu_flash_attention.npu_fusion_attention = recording(
        npu_flash_attention.npu_fusion_attention)
    torch.nn.functional.scaled_dot_product_attention = recording(
        torch.nn.functional.scaled_dot_product_attention)

    class Pairs(torch.utils.data.Dataset):
        """Random tokens each followed by its successor: learnable from the first steps."""
        def __init__(self, n):
            g = torch.Generator().manual_seed(1)
            self.x = torch.randint(0, 64, (n, 32), generator=g)
            self.x[:, 1::2] = (self.x[:, 0::2] + 1) % 64
        def __len__(self):
            return len(self.x)
        def __getitem__(self, i):
            return {"input_ids": self.x[i], "labels": self.x[i]}

    def train(run, out):
        torch.manual_seed(0)
        config = LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=128,
                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                             max_position_embeddings=64, use_cache=False)
        model = LlamaForCausalLM._from_config(config, attn_implementation=run["attention"])
        lr = 3e-3
        if run.get("lora"):
            from peft import LoraConfig, get_peft_model
            model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0,
                                                     target_modules=["q_proj", "v_proj",
                                                                     "up_proj", "down_proj"]))
            lr = 2e-2
        checkpointing = run.get("checkpointing")
        args = TrainingArguments(
            output_dir=out, per_device_train_batch_size=8, max_steps=10, learning_rate=lr,
            fp16=run["precision"] == "fp16", bf16=run["precision"] == "bf16",
            gradient_checkpointing=checkpointing is not None,
            gradient_checkpointing_kwargs=None if checkpointing is None else
            {"use_reentrant": checkpointing == "reentrant"},
            logging_steps=1, report_to=[], save_strategy="no", dataloader_num_workers=0,
            disable_tqdm=True, seed=0)
        trainer = Trainer(model=model, args=args, train_dataset=Pairs(80))
        attention_dtypes.clear()
        trainer.train()
        scaler = trainer.accelerator.scaler
        return {"losses": [e["loss"] for e in trainer.state.log_history if "loss" in e],
                "device": str(args.device), "attention_dtypes": sorted(attention_dtypes),
                "scale": scaler.get_scale() if scaler is not None else None}

    for run in json.loads(sys.argv[2]):
        print("RESULT", json.dumps(dict(run, **train(run, sys.argv[1]))), flush=True)
''')


def runs(chip, configurations):
    """The Trainer's results for each configuration, in one child as ``chip``."""
    env = overlay_support.overlay_env()
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        APEXNPU_SOC_VERSION=chip,
        OMP_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "train.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        proc = subprocess.run(
            [sys.executable, script, os.path.join(work, "out"), json.dumps(configurations)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            cwd=work,
        )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    results = [
        json.loads(line.split(" ", 1)[1])
        for line in proc.stdout.splitlines()
        if line.startswith("RESULT ")
    ]
    assert len(results) == len(configurations)
    return results


def check_against_fp32(results, precision):
    """Every mixed-precision run learns and follows the fp32 run of its kind (LoRA or not)."""
    reference = {bool(r.get("lora")): r["losses"] for r in results if r["precision"] == "fp32"}
    for r in results:
        assert r["device"] == "npu:0"
        if r["attention"] != "eager":  # flash attention and SDPA ran in the run's precision
            assert r["attention_dtypes"] == [DTYPE[r["precision"]]], r
        assert len(r["losses"]) == 10, r
        assert r["losses"][-1] < r["losses"][0] - LEARNED[bool(r.get("lora"))], r
        if r["precision"] == "fp32":
            continue
        want = reference[bool(r.get("lora"))]
        worst = max(abs(a - b) for a, b in zip(r["losses"], want))
        assert worst <= TOLERANCE[precision], (r, want, worst)


def test_fp16_on_a_910():
    """fp16 with torch.npu.amp's GradScaler, which never backs off. ``sdpa`` with gradient
    checkpointing: on NPU tensors SDPA is one fused kernel masking in fp32 (torch's own
    decomposition would make an fp16 -inf of the boolean mask, which a 910 counts as an
    overflow, so the scaler would skip every step after the recomputation in backward)."""
    results = runs(
        "Ascend910A",
        [
            {"attention": "eager", "precision": "fp32"},
            {"attention": "eager", "precision": "fp32", "lora": True},
            {"attention": "eager", "precision": "fp16"},
            {"attention": "sdpa", "precision": "fp16", "checkpointing": "reentrant"},
            {"attention": "flash_attention_2", "precision": "fp16", "checkpointing": "reentrant"},
            {
                "attention": "eager",
                "precision": "fp16",
                "lora": True,
                "checkpointing": "non-reentrant",
            },
        ],
    )
    check_against_fp32(results, "fp16")
    for r in results[2:]:
        assert r["scale"] == 65536.0, r  # the scaler never backed off: no step was skipped


def test_bf16_on_a_910b():
    results = runs(
        "Ascend910B1",
        [
            {"attention": "eager", "precision": "fp32"},
            {"attention": "eager", "precision": "fp32", "lora": True},
            {"attention": "sdpa", "precision": "bf16", "checkpointing": "reentrant"},
            {"attention": "flash_attention_2", "precision": "bf16"},
            {
                "attention": "sdpa",
                "precision": "bf16",
                "lora": True,
                "checkpointing": "non-reentrant",
            },
        ],
    )
    check_against_fp32(results, "bf16")
