"""The Hugging Face Trainer with ``fp16=True`` on the emulated NPU, as Ascend's guides run it
(``import torch_npu`` and ``transfer_to_npu``, nothing else changed): transformers finds the NPU,
accelerate's GradScaler is ``torch.npu.amp.GradScaler`` driving torch's fused AdamW, and under
torchrun the ranks train with DDP over hccl (the Trainer gathers its int64 FLOP count). Needs
transformers and accelerate, which scripts/torch2_venv.sh installs beside torch 2.x; skipped
where they are missing (Debian's torch 1.13 has neither)."""

import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

import overlay_support

# A mark, not a module-level skip: pytest would then collect nothing and exit with 5.
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in ("transformers", "accelerate")),
    reason="the HF Trainer test needs transformers and accelerate (scripts/torch2_venv.sh "
    "installs them in the torch 2.x venv)",
)

UNTRAINED = math.log(3)  # the loss of a guess among three classes

SCRIPT = textwrap.dedent('''
    import json, os, sys
    import torch
    import torch_npu
    from torch_npu.contrib import transfer_to_npu  # noqa: F401
    from transformers import (BertConfig, BertForSequenceClassification, Trainer,
                              TrainingArguments)
    from transformers.utils import is_torch_npu_available

    class Tokens(torch.utils.data.Dataset):
        """Sequences whose label is their first token (one of six) mod 3: learnable in a few
        steps."""
        def __init__(self, n, seed):
            g = torch.Generator().manual_seed(seed)
            self.x = torch.randint(0, 96, (n, 16), generator=g)
            self.x[:, 0] = torch.randint(0, 6, (n,), generator=g)
        def __len__(self):
            return len(self.x)
        def __getitem__(self, i):
            return {"input_ids": self.x[i], "attention_mask": torch.ones(16, dtype=torch.long),
                    "labels": self.x[i, 0] % 3}

    torch.manual_seed(0)
    config = BertConfig(vocab_size=96, hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=64, num_labels=3)
    model = BertForSequenceClassification(config)
    args = TrainingArguments(output_dir=sys.argv[1], per_device_train_batch_size=8,
                             num_train_epochs=6, learning_rate=3e-3, fp16=True, logging_steps=1,
                             report_to=[], save_strategy="no", dataloader_num_workers=0,
                             disable_tqdm=True, seed=0)
    trainer = Trainer(model=model, args=args, train_dataset=Tokens(64, 1),
                      eval_dataset=Tokens(32, 2))
    trainer.train()  # (an evaluate() before it would leave the model out of DDP: accelerate's)
    last = trainer.evaluate()["eval_loss"]
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    scaler = trainer.accelerator.scaler
    result = os.path.join(os.path.dirname(sys.argv[1]), f"result-{os.environ.get('RANK', 0)}")
    with open(result, "w") as f:  # not stdout: the ranks' long lines could interleave there
        json.dump({
            "npu": is_torch_npu_available(), "device": str(args.device),
            "parameters_on": sorted({str(p.device) for p in model.parameters()}),
            "scaler": type(scaler).__module__ + "." + type(scaler).__name__,
            "optimizer": [type(trainer.optimizer.optimizer).__name__,
                          bool(trainer.optimizer.optimizer.defaults.get("fused"))],
            "losses": losses, "eval": last,
            "checksum": float(sum(p.detach().double().sum().cpu() for p in model.parameters())),
        }, f)
''')


def run(*launcher, **env):
    """The script under ``launcher`` (a torchrun command, or none); each process's result."""
    full = overlay_support.overlay_env(overlay_support.runtime_dir())
    full.update(env)
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "train.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        proc = subprocess.run(
            [sys.executable, *launcher, script, os.path.join(work, "out")],
            env=full,
            capture_output=True,
            text=True,
            timeout=900,
            cwd=work,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
        results = []
        for name in sorted(os.listdir(work)):
            if name.startswith("result-"):
                with open(os.path.join(work, name)) as f:
                    results.append(json.load(f))
    return results


def test_the_trainer_trains_in_fp16_on_the_npu():
    (got,) = run()
    assert got["npu"] is True and got["device"] == "npu:0"
    assert got["parameters_on"] == ["npu:0"]
    assert got["scaler"] == "torch_npu.npu.amp.grad_scaler.GradScaler"
    assert got["optimizer"] == ["AdamW", True]  # torch's fused AdamW, unscaling by itself
    assert got["eval"] < UNTRAINED / 2, got


def test_the_trainer_trains_with_ddp_over_hccl_on_two_npus():
    results = run("-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2")
    assert len(results) == 2
    assert sorted(r["device"] for r in results) == ["npu:0", "npu:1"]
    # DDP keeps the replicas equal: the same parameters, losses and evaluation on both ranks.
    assert results[0]["checksum"] == results[1]["checksum"]
    assert results[0]["losses"] == results[1]["losses"]
    assert results[0]["eval"] == results[1]["eval"] < UNTRAINED / 2
