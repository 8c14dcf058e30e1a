"""Ascend's BERT question-answering recipe from its model zoo
(github.com/Ascend/ModelZoo-PyTorch, ``PyTorch/built-in/nlp/Bert-Squad_ID0470_for_PyTorch``),
its own code unchanged, on an emulated 910 with the flags of its ``test/train_base_full_1p.sh``
at a tiny size: ``run_squad.py`` trains a BERT for SQuAD in apex O2 with ``combine_grad`` and a
static loss scale of 4096, stepped by the recipe's ``NpuFusedBertAdamV2`` (a subclass of
NpuFusedBertAdam whose own ``_group_step`` runs ``torch_npu.npu_bert_apply_adam`` on amp's
combined buffers, with the warmup of ``npu_fused_bert_adam.SCHEDULES`` at the step it keeps in
the combined state) under the recipe's ``LinearWarmUpScheduler``, with IntTensor inputs; then
predicts the dev set and scores it with the evaluation script it is given. Its fp32 run
(``ALLOW_FP32=1``) takes torch_npu's NpuFusedBertAdam without amp instead. Its 8-NPU launch
(``train_base_full_8p.sh``: 8 processes over hccl) adds amp's ``combine_ddp``.

The data is a synthetic SQuAD in the recipe's format: each context holds "the answer is X" among
random words of a 200-word vocabulary, and the question asks for X. The model is a 2-layer BERT
of width 64 (the recipe's ``BertConfig``), from an empty checkpoint (the recipe loads it with
``strict=False``). What the recipe imports that is not here: NVIDIA's dllogger (not on PyPI)
stands in (``overlay_support/modelzoo_driver.py``); boto3, six and tqdm are installed.

Checks: both runs learn (the recipe's logged step losses, ln 64 at first, a uniform guess over
the positions, are a fifth lower over the last epoch; measured: O2 half, fp32 a third), the
recipe's own evaluation runs and reports, and the amp run is apex O2 with a static loss scale.
(Before the fix of ``_group_step``'s step, the O2 run's learning rate stayed 0 and its loss
stayed at ln 64.)

torch 1.13 only: the recipe ships a ``triton/`` directory (NVIDIA Triton's client), which, on
the script's path, torch 2.x's dynamo takes for the Triton compiler and fails to import; torch_npu
2.x imports dynamo when imported, so the recipe stops there on an NPU too.

Needs APEXNPU_TEST_MODELZOO (a git directory of the model zoo), APEXNPU_BINARY and
APEXNPU_TEST_UPSTREAM (apex's wheel is built by ``apexnpu``); skips with a message otherwise."""

import json
import math
import os
import random
import re
import shutil

import pytest
import torch

import build_helpers as bh
from overlay_support import modelzoo

MODELZOO = os.environ.get("APEXNPU_TEST_MODELZOO")
COMMIT = "6a2804a358a5b18e3dac1ab902f41f88e240b00f"  # master of 2023-12-15
RECIPE = "PyTorch/built-in/nlp/Bert-Squad_ID0470_for_PyTorch"
REQUIREMENTS = ["boto3==1.44.8", "botocore==1.44.8", "six==1.17.0", "tqdm==4.70.1"]

pytestmark = [
    pytest.mark.skipif(
        not MODELZOO,
        reason="APEXNPU_TEST_MODELZOO is not set (a git directory of "
        "github.com/Ascend/ModelZoo-PyTorch) to run Ascend's BERT recipe",
    ),
    pytest.mark.skipif(
        int(torch.__version__.split(".")[0]) >= 2,
        reason="the recipe's own triton/ directory breaks torch 2.x's dynamo import (as with "
        "torch_npu 2.x, which imports dynamo)",
    ),
]

WORDS = [f"w{i}" for i in range(200)]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "answer", "is", "what", "?", "."]
CONFIG = {
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 64,
    "initializer_range": 0.02,
    "intermediate_size": 128,
    "max_position_embeddings": 128,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "type_vocab_size": 2,
    "vocab_size": len(VOCAB) + len(WORDS),
}
# SQuAD 1.1's measures: exact match and token F1 against the best gold answer, as JSON.
EVALUATE = r"""
import collections, json, sys

def tokens(s):
    return s.lower().split()

def f1(pred, gold):
    same = sum((collections.Counter(tokens(pred)) & collections.Counter(tokens(gold))).values())
    if same == 0:
        return 0.0
    p, r = same / len(tokens(pred)), same / len(tokens(gold))
    return 2 * p * r / (p + r)

data, predictions = json.load(open(sys.argv[1]))["data"], json.load(open(sys.argv[2]))
em = f = n = 0
for article in data:
    for paragraph in article["paragraphs"]:
        for qa in paragraph["qas"]:
            golds = [a["text"] for a in qa["answers"]]
            got = predictions.get(qa["id"], "")
            em += max(float(tokens(got) == tokens(g)) for g in golds)
            f += max(f1(got, g) for g in golds)
            n += 1
print(json.dumps({"exact_match": 100.0 * em / n, "f1": 100.0 * f / n}))
"""


def squad(count, seed):
    rng = random.Random(seed)
    paragraphs = []
    for i in range(count):
        before = [rng.choice(WORDS) for _ in range(rng.randint(3, 20))]
        answer = rng.choice(WORDS)
        after = [rng.choice(WORDS) for _ in range(rng.randint(3, 20))]
        lead = " ".join(before + ["the", "answer", "is"])
        qa = {
            "id": f"q{seed}-{i}",
            "question": "what is the answer ?",
            "answers": [{"text": answer, "answer_start": len(lead) + 1}],
        }
        paragraphs.append({"context": " ".join([lead, answer, "."] + after), "qas": [qa]})
    return {"version": "1.1", "data": [{"title": "synthetic", "paragraphs": paragraphs}]}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """The recipe at COMMIT, the driver, and the data, model config and empty checkpoint."""
    work = tmp_path_factory.mktemp("modelzoo_bert")
    modelzoo.extract(COMMIT, [RECIPE], str(work))
    shutil.copy(modelzoo.DRIVER, work / "driver.py")
    data = work / "data"
    data.mkdir()
    (data / "vocab.txt").write_text("\n".join(VOCAB + WORDS) + "\n")
    (data / "train-v1.1.json").write_text(json.dumps(squad(256, 1)))
    (data / "dev-v1.1.json").write_text(json.dumps(squad(32, 2)))
    (data / "bert_tiny_config.json").write_text(json.dumps(CONFIG))
    (data / "evaluate-v1.1.py").write_text(EVALUATE)
    torch.save({"model": {}}, str(data / "bert_base.pt"))
    return work


@pytest.fixture(scope="module")
def python(tmp_path_factory):
    """A venv's python holding apex's and the emulator's wheels and the recipe's requirements."""
    from overlay_support import wheels

    vpy = wheels.amp_venv(tmp_path_factory, "modelzoo-bert-wheels")
    inst = bh.pip(vpy, "install", "--disable-pip-version-check", *REQUIREMENTS)
    assert inst.returncode == 0, inst.stdout
    return vpy


def recipe_args(work, name, *flags):
    """``run_squad.py`` with train_base_full_1p.sh's flags at a tiny size, then ``flags``."""
    data = work / "data"
    args = ["run_squad.py", "--init_checkpoint", str(data / "bert_base.pt")]
    args += ["--bert_model", "bert-base-uncased", "--do_train", "--do_predict", "--do_eval"]
    args += ["--train_file", str(data / "train-v1.1.json")]
    args += ["--predict_file", str(data / "dev-v1.1.json"), "--predict_batch_size", "16"]
    args += ["--learning_rate", "5e-3", "--seed", "1"]
    args += ["--max_seq_length", "64", "--doc_stride", "32", "--max_steps", "-1", "--use_npu"]
    args += ["--vocab_file", str(data / "vocab.txt"), "--do_lower_case"]
    args += ["--eval_script", str(data / "evaluate-v1.1.py"), "--skip_cache"]
    args += ["--output_dir", str(work / f"results-{name}")]
    args += ["--config_file", str(data / "bert_tiny_config.json"), *flags]
    return [str(work / "driver.py"), *args]


def reports(output):
    """(the logged step losses, the evaluation's record or None) of a run's output."""
    records = [json.loads(d) for d in re.findall(r"^DLL \(.*?\) (\{.*\})$", output, re.M)]
    losses = [r["step_loss"] for r in records if "step_loss" in r]
    return losses, next((r for r in records if "F1" in r), None)


def train(python, work, name, *flags, **env):
    """The 1p run: (the logged step losses, the evaluation's record, the output)."""
    args = recipe_args(work, name, "--train_batch_size", "16", "--num_train_epochs", "6")
    args += ["--npu_id", "0", *flags]
    code, output = modelzoo.run(python, args, work / RECIPE, timeout=900, **env)
    assert code == 0, output[-6000:]
    losses, scores = reports(output)
    return losses, scores, output


def learned(losses, steps=96):
    assert len(losses) == steps and all(math.isfinite(x) for x in losses), losses
    assert abs(losses[0] - math.log(64)) < 0.1, losses[:3]  # a uniform guess to begin with
    assert sum(losses[-16:]) / 16 < 0.8 * losses[0], losses


def test_bert_squad_trains_in_o2_with_its_own_group_step_and_in_fp32(python, work):
    losses, scores, output = train(python, work, "o2", "--fp16", "--loss_scale", "4096")
    assert (
        "opt_level                  : O2" in output
        and "loss_scale                 : 4096.0" in output
    )
    learned(losses)
    assert 0 <= scores["exact_match"] <= scores["F1"] <= 100, scores
    fp32_losses, fp32_scores, _ = train(python, work, "fp32", ALLOW_FP32="1")
    learned(fp32_losses)
    assert 0 <= fp32_scores["exact_match"] <= fp32_scores["F1"] <= 100, fp32_scores


def test_bert_squad_on_8_npus_with_combine_ddp(python, work):
    """train_base_full_8p.sh's launch: 8 processes (``--local_rank``, ``--num_npu 8``; the
    recipe joins them over hccl at 127.0.0.1:29668), amp O2 with ``combine_ddp`` reducing the
    combined gradients; rank 0 predicts and evaluates."""
    args = recipe_args(work, "8p", "--train_batch_size", "4", "--num_train_epochs", "2")
    args += ["--fp16", "--loss_scale", "4096", "--addr", "127.0.0.1", "--num_npu", "8"]
    logs = [str(work / f"rank-{rank}.log") for rank in range(8)]
    ranks = [
        modelzoo.start(
            python, args + ["--npu_id", str(r), "--local_rank", str(r)], work / RECIPE, log
        )
        for r, log in enumerate(logs)
    ]
    try:
        codes = [rank.wait(timeout=900) for rank in ranks]
    finally:
        for rank in ranks:
            rank.kill()
    outputs = [open(log).read() for log in logs]
    for r, (code, output) in enumerate(zip(codes, outputs)):
        assert code == 0, output[-6000:]
        assert f"train on device npu:{r}, rank {r}" in output
        losses, scores = reports(output)
        # 256 examples in batches of 4 per rank, 2 epochs: 16 steps each.
        assert len(losses) == 16 and all(math.isfinite(x) for x in losses), losses
        assert sum(losses[-4:]) / 4 < 0.8 * losses[0], (r, losses)
        assert (scores is not None) == (r == 0), (r, scores)
