"""Ascend's LLaMA recipe from its model zoo (github.com/Ascend/ModelZoo-PyTorch,
``PyTorch/built-in/foundation/LLaMA-13B``: FastChat's ``train_mem.py``), unchanged, on two
emulated NPUs with the flags of its ``scripts/train_vicuna_7b.sh``: FSDP ``full_shard
auto_wrap`` of ``LlamaDecoderLayer``, gradient checkpointing, lazy preprocessing, bf16 on a 910B
and fp16 on a 910, torchrun. A tiny LLaMA with random weights and a sentencepiece tokenizer
trained here stand for the 7B checkpoint; a few conversations in FastChat's format for its data.

Left out of the script's flags: ``--tf32`` (transformers refuses it without CUDA, on an NPU too:
the recipe patches transformers 4.3x for it), ``--evaluation_strategy``/``--eval_steps`` (renamed
in the transformers pinned here), and saving (``--save_strategy no``). Sizes, steps and the
learning rate are the tiny model's.

Needs APEXNPU_TEST_MODELZOO (a git directory of github.com/Ascend/ModelZoo-PyTorch, read in
place with ``git archive`` at a pinned commit), and transformers with sentencepiece (the torch
2.x venv of scripts/torch2_venv.sh); skips with a message otherwise."""

import ast
import importlib.util
import json
import math
import os
import random
import re
import subprocess
import sys

import pytest

import overlay_support
from overlay_support import modelzoo, ranks

MODELZOO = os.environ.get("APEXNPU_TEST_MODELZOO")
COMMIT = "6a2804a358a5b18e3dac1ab902f41f88e240b00f"  # master of 2023-12-15
RECIPE = "PyTorch/built-in/foundation/LLaMA-13B"

pytestmark = [
    pytest.mark.skipif(
        not MODELZOO,
        reason="APEXNPU_TEST_MODELZOO is not set (a git directory "
        "of github.com/Ascend/ModelZoo-PyTorch) to run Ascend's LLaMA recipe",
    ),
    pytest.mark.skipif(
        not all(
            importlib.util.find_spec(m) for m in ("transformers", "accelerate", "sentencepiece")
        ),
        reason="the LLaMA recipe needs transformers, accelerate and sentencepiece "
        "(scripts/torch2_venv.sh installs them in the torch 2.x venv)",
    ),
]

# FastChat's vicuna prompt, so the tokenizer has its words (an unknown piece would be read as
# padding by the recipe's label masking).
SYSTEM = (
    "A chat between a curious user and an artificial intelligence assistant. The assistant "
    "gives helpful, detailed, and polite answers to the user's questions."
)
WORDS = (
    "the a cat dog runs eats sleeps big small red blue tree house river sun moon answer "
    "question tip healthy diet exercise sleep water read write"
).split()


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    """(the recipe's directory, the tiny model's, the data file)."""
    import sentencepiece
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaTokenizer

    work = tmp_path_factory.mktemp("modelzoo_llama")
    modelzoo.extract(COMMIT, [RECIPE], str(work))
    rng = random.Random(0)
    corpus = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(2000)]
    corpus += [f"{SYSTEM} USER: Sort: the cat ASSISTANT: cat the"] * 50
    with open(work / "corpus.txt", "w") as f:
        f.write("\n".join(corpus))
    sentencepiece.SentencePieceTrainer.train(
        input=str(work / "corpus.txt"),
        model_prefix=str(work / "tok"),
        vocab_size=400,
        model_type="bpe",
        byte_fallback=True,
        character_coverage=1.0,
        bos_id=1,
        eos_id=2,
        unk_id=0,
        pad_id=-1,
        minloglevel=2,
    )
    model = str(work / "tiny-llama")
    tokenizer = LlamaTokenizer(vocab_file=str(work / "tok.model"), legacy=True)
    tokenizer.save_pretrained(model)
    torch.manual_seed(0)
    LlamaForCausalLM(
        LlamaConfig(
            vocab_size=tokenizer.vocab_size,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=4,
            max_position_embeddings=256,
        )
    ).save_pretrained(model)
    data = []
    for i in range(64):
        question = " ".join(rng.choice(WORDS) for _ in range(8))
        data.append(
            {
                "id": str(i),
                "conversations": [
                    {"from": "human", "value": "Sort: " + question},
                    {"from": "gpt", "value": " ".join(sorted(question.split()))},
                ],
            }
        )
    with open(work / "data.json", "w") as f:
        json.dump(data, f)
    return str(work / RECIPE), model, str(work / "data.json")


def train(recipe, chip, precision):
    """Run train_mem.py on 2 ranks as ``chip``; (return code, the logged losses, output)."""
    directory, model, data = recipe
    env = overlay_support.overlay_env()
    env.update(
        PYTHONPATH=os.pathsep.join([env["PYTHONPATH"], directory]),
        APEXNPU_SOC_VERSION=chip,
        HF_HUB_OFFLINE="1",
        WANDB_DISABLED="true",
        OMP_NUM_THREADS="1",
    )
    args = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node=2",
        f"--master_port={ranks.free_port()}",
        "fastchat/train/train_mem.py",
        "--model_name_or_path",
        model,
        "--data_path",
        data,
        *precision,
        "--output_dir",
        os.path.join(os.path.dirname(data), "ckpt"),
        "--num_train_epochs",
        "3",
        "--max_steps",
        "6",
        "--per_device_train_batch_size",
        "2",
        "--per_device_eval_batch_size",
        "16",
        "--gradient_accumulation_steps",
        "1",
        "--save_strategy",
        "no",
        "--learning_rate",
        "2e-3",
        "--weight_decay",
        "0.",
        "--warmup_ratio",
        "0.04",
        "--lr_scheduler_type",
        "cosine",
        "--logging_steps",
        "1",
        "--fsdp",
        "full_shard auto_wrap",
        "--fsdp_transformer_layer_cls_to_wrap",
        "LlamaDecoderLayer",
        "--model_max_length",
        "192",
        "--gradient_checkpointing",
        "True",
        "--lazy_preprocess",
        "True",
    ]
    proc = subprocess.run(args, cwd=directory, env=env, capture_output=True, text=True, timeout=900)
    output = proc.stdout + proc.stderr
    losses = [ast.literal_eval(m)["loss"] for m in re.findall(r"\{'loss': [^}]*\}", output)]
    return proc.returncode, losses, output


@pytest.fixture(scope="module")
def fp32_losses(recipe):
    code, losses, output = train(recipe, "Ascend910B1", [])
    assert code == 0, output[-6000:]
    assert "tokenization mismatch" not in output  # the labels are the answers', not all masked
    return losses


@pytest.mark.parametrize(
    "chip, precision, tolerance",
    [
        ("Ascend910B1", ["--bf16", "True"], 3e-2),
        ("Ascend910A", ["--fp16", "True"], 1e-2),
    ],
)
def test_the_recipe_trains_as_fp32_does(recipe, fp32_losses, chip, precision, tolerance):
    code, losses, output = train(recipe, chip, precision)
    assert code == 0, output[-6000:]
    assert len(losses) == len(fp32_losses) == 6
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < losses[0] - 0.2, losses  # it learns
    for got, want in zip(losses, fp32_losses):
        assert abs(got - want) <= tolerance * abs(want), (losses, fp32_losses)


def test_bf16_on_a_910_is_refused_as_on_the_chip(recipe):
    code, _, output = train(recipe, "Ascend910A", ["--bf16", "True"])
    assert code != 0 and "doesn't support bf16" in output
