"""Ascend's recurrent NLP recipes from its model zoo (github.com/Ascend/ModelZoo-PyTorch,
``PyTorch/built-in/nlp/``), their own code unchanged, on an emulated 910 with apex.amp O2 as their
``test/train_*_1p.sh`` scripts run them, through apex's and the emulator's wheels built here:

- BiLSTM-CRF_for_PyTorch: ``runner.py`` run as a script with the flags of
  ``test/train_BiLstm_RT2_performance_1p_nd.sh`` (``transfer_to_npu``, ``NpuFusedAdam``, O2 with
  ``combine_grad``, bin mode, ND formats) on a few sentences in ResumeNER's ``.char.bmes`` format.
- LSTM_ID0468_for_PyTorch: ``NPU/1p/steps/train_ctc.py`` (a CNN + LSTM speech model with a CTC
  loss, ``NpuFusedAdam``, O2 with ``combine_grad``, loss scale 128) run as ``__main__`` with the
  flags of ``test/train_performance_1p.sh``, on synthetic "utterances" in its scp/label/units
  format, its ``conf/ctc_config.yaml`` with their paths and a tiny model's sizes. Three packages
  it imports are not installed here and stand in: ``kaldiio.load_mat`` reads features saved with
  numpy instead of Kaldi's ark, ``editdistance.eval`` is a Levenshtein distance written in the
  driver, and ``torch.utils.tensorboard.SummaryWriter`` (constructed, never written to) is inert.
- GRU_for_PyTorch: ``gru_1p.py``'s ``main()``, ``train()`` and ``evaluate()`` with its Encoder,
  Decoder and Seq2Seq, parsing the flags of ``test/train_performance_1p.sh`` (``--amp``: O2, loss
  scale 32). Its data comes from torchtext's legacy ``Field``/``Multi30k``/``BucketIterator``
  (removed from torchtext long before torch 1.13) tokenised by spaCy's downloadable models, so
  its ``main_worker`` (which only builds that data, the model and the epoch loop) is replaced by
  the driver's: synthetic batches of token ids in the iterator's layout (``.src``/``.trg``,
  time-major), the recipe's classes at a tiny model's sizes, the recipe's ``init_weights``,
  optimizer, ``amp.initialize`` and criterion as ``main_worker`` makes them. The spaCy model
  modules its import loads stand in without a tokenizer (nothing tokenises here).

Epochs, batch sizes and print intervals are the tiny runs' (the scripts' are for the full data
sets). Checks: each trains (losses finite and falling; the NER model tags the test sentences and
the CTC model decodes some dev phones, by the recipes' own reports), and the GRU and CTC recipes,
which seed themselves, train in fp16 (O2) to the losses of the same run in fp32 (their scripts
without the amp flags): GRU within 1% (its GRU kernels store their outputs to fp16 once; the loss
is taken on fp32 outputs), CTC within 2% over the first five epochs (its fp16 convolutions, batch
norms and LSTMs drift from fp32 slowly after that). BiLSTM's runner seeds nothing (it seeds only
when distributed), so no fp32 run has its initial weights to compare with.

Needs APEXNPU_TEST_MODELZOO (a git directory of the model zoo, read with ``git archive`` at a
pinned commit), APEXNPU_BINARY and APEXNPU_TEST_UPSTREAM (apex.amp comes from NVIDIA Apex, built
into a wheel by ``apexnpu``); skips with a message otherwise."""

import importlib.util
import json
import math
import os
import random
import re

import pytest

from overlay_support import modelzoo

MODELZOO = os.environ.get("APEXNPU_TEST_MODELZOO")
COMMIT = "6a2804a358a5b18e3dac1ab902f41f88e240b00f"  # master of 2023-12-15
NLP = "PyTorch/built-in/nlp/"
GRU = NLP + "GRU_for_PyTorch"
BILSTM = NLP + "BiLSTM-CRF_for_PyTorch"
CTC = NLP + "LSTM_ID0468_for_PyTorch"

pytestmark = pytest.mark.skipif(
    not MODELZOO,
    reason="APEXNPU_TEST_MODELZOO is not set (a git directory of "
    "github.com/Ascend/ModelZoo-PyTorch) to run Ascend's recurrent NLP recipes",
)

# Runs a recipe's code where a package it imports cannot be installed here (see the docstring):
# ``ctc SCRIPT ARGS...`` runs the script as __main__; ``gru ARGS...`` runs gru_1p.main().
DRIVER = r'''
import json
import runpy
import sys
import types


def standin(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def levenshtein(a, b):
    """Edits turning sequence a into b (what editdistance.eval answers)."""
    a, b = list(a), list(b)
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        diagonal, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (x != y))
    return row[-1]


class InertWriter:
    def __init__(self, *args, **kwargs):
        pass


class NoTokenizer:
    def tokenizer(self, text):
        raise RuntimeError("spaCy's models are not installed: nothing can be tokenised")


def gru_main_worker(args):
    """gru_1p.main_worker's model, optimizer, amp and epoch loop on synthetic batches."""
    import torch
    import gru_1p
    from apex import amp
    from decoder import Decoder
    from encoder import Encoder
    from seq2seq import Seq2Seq

    device = gru_1p.CALCULATE_DEVICE
    vocab, length, pad, sos, eos = 24, 12, 1, 2, 3
    generator = torch.Generator().manual_seed(0)

    def batch():
        # Copy the source: <sos> w... <eos> <pad>..., time-major as BucketIterator gives it.
        src = torch.full((length, args.batch_size), pad, dtype=torch.long)
        for b in range(args.batch_size):
            n = int(torch.randint(4, length - 2, (1,), generator=generator))
            src[0, b], src[n + 1, b] = sos, eos
            src[1 : n + 1, b] = torch.randint(4, vocab, (n,), generator=generator)
        return types.SimpleNamespace(src=src.to(device), trg=src.clone().to(device))

    train = [batch() for _ in range(8)]
    valid = [batch() for _ in range(2)]
    seed = gru_1p.gen_seeds(32 * 1024 * 12).float().to(device)
    enc = Encoder(vocab, 32, 64, gru_1p.ENC_DROPOUT, seed=seed).to(device)
    dec = Decoder(vocab, 32, 64, gru_1p.DEC_DROPOUT, seed=seed).to(device)
    model = Seq2Seq(enc, dec, device).to(device)
    model.apply(gru_1p.init_weights)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.003)
    if args.amp:
        model, optimizer = amp.initialize(
            model, optimizer, opt_level=args.opt_level, loss_scale=args.loss_scale
        )
    criterion = torch.nn.CrossEntropyLoss(ignore_index=pad).to(device)
    losses = []
    for epoch in range(args.epochs):
        losses.append(gru_1p.train(model, train, optimizer, criterion, args, gru_1p.CLIP, epoch))
        losses.append(gru_1p.evaluate(model, valid, criterion))
    weight = next(model.parameters())
    print("RESULT", json.dumps([losses, str(weight.dtype), str(weight.device)]))


recipe = sys.argv[1]
if recipe == "ctc":
    import numpy

    standin("kaldiio", load_mat=numpy.load)
    standin("editdistance", eval=levenshtein)
    standin("torch.utils.tensorboard", SummaryWriter=InertWriter)
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")
else:
    standin("spacy")
    standin("en_core_web_sm", load=NoTokenizer)
    standin("de_core_news_sm", load=NoTokenizer)
    standin("torchtext")
    standin("torchtext.datasets", Multi30k=None)
    standin("torchtext.data", Field=None, BucketIterator=None, Iterator=None)
    standin("torchtext.data.metrics", bleu_score=None)
    sys.argv = ["gru_1p.py"] + sys.argv[2:]
    import gru_1p

    gru_1p.main_worker = gru_main_worker
    gru_1p.main()
'''


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A folder holding the three recipes at COMMIT and the driver."""
    work = tmp_path_factory.mktemp("modelzoo_recurrent")
    modelzoo.extract(COMMIT, [GRU, BILSTM, CTC], str(work))
    (work / "driver.py").write_text(DRIVER)
    return work


@pytest.fixture(scope="module")
def python(tmp_path_factory):
    """A venv's python holding apex's and the emulator's wheels (skips without them)."""
    from overlay_support import wheels

    return wheels.amp_venv(tmp_path_factory, "modelzoo-recurrent-wheels")


def write_ner_data(folder):
    """Sentences in ResumeNER's format: one "character tag" per line (BMES tags), a blank line
    after each. Names are runs of 2-3 capitals, other characters lower case: learnable."""
    rng = random.Random(0)
    folder.mkdir(parents=True)
    for split, count in (("train", 64), ("dev", 16), ("test", 16)):
        lines = []
        for _ in range(count):
            length = rng.randint(4, 12)
            while length > 0:
                if rng.random() < 0.3:
                    name = [rng.choice("ABCDEFGH") for _ in range(rng.randint(2, 3))]
                    tags = ["B-NAME"] + ["M-NAME"] * (len(name) - 2) + ["E-NAME"]
                    lines += [f"{c} {t}" for c, t in zip(name, tags)]
                    length -= len(name)
                else:
                    lines.append(f"{rng.choice('abcdefghijklmnopqrstuvwxyz')} O")
                    length -= 1
            lines.append("")
        (folder / f"{split}.char.bmes").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_bilstm_ner_trains_unchanged(work, python):
    recipe = work / BILSTM
    data = recipe / "BiLstm" / "ResumeNER"  # where runner.py saves to and reads by default
    write_ner_data(data)
    code, output = modelzoo.run(
        python,
        [
            "-u",
            "runner.py",
            f"--data-path={data}",
            "--amp_opt_level=O2",
            "--local_rank=0",
            "--bin_mode=true",
            "--train_epochs=12",
            "--batch_size=8",
            "--print_step=8",
            "--profiling=false",
            "--p_start_step=0",
            "--iteration_num=-1",
            "--ND=True",
        ],
        recipe,
        PYTHONPATH=str(recipe / "named_entity_recognition"),  # as its test scripts export
    )
    assert code == 0, output[-6000:]
    assert "allow_internal_format = False" in output and "bin_mode is on" in output
    losses = [float(x) for x in re.findall(r"step/total_step: 8/\d+ .*Loss:([-\d.e+]+)", output)]
    assert len(losses) == 12 and all(math.isfinite(x) for x in losses), output[-4000:]
    assert losses[-1] < 0.5 * losses[0], losses
    report = re.search(r"avg/total\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", output)
    assert report and float(report.group(3)) > 0.6, output[-3000:]  # its F1 on the test split
    assert (recipe / "BiLstm" / "ckpts" / "bilstm.pt").exists()


def gru(work, python, amp):
    flags = ["--data-dir", str(work), "--workers", "12", "--dist-url", "tcp://127.0.0.1:50000"]
    flags += ["--world-size", "1", "--npu", "0", "--batch-size", "16", "--epochs", "3"]
    flags += ["--rank", "0"] + (["--amp"] if amp else [])
    recipe = work / GRU
    code, output = modelzoo.run(
        python, [str(work / "driver.py"), "gru", *flags], recipe, PYTHONPATH=str(recipe)
    )
    assert code == 0, output[-6000:]
    return json.loads(output.split("RESULT ", 1)[1].splitlines()[0])


def test_gru_seq2seq_trains_in_fp16_as_in_fp32(work, python):
    losses, dtype, device = gru(work, python, amp=True)
    fp32_losses, fp32_dtype, _ = gru(work, python, amp=False)
    assert (dtype, device, fp32_dtype) == ("torch.float16", "npu:0", "torch.float32")
    train, valid = losses[0::2], losses[1::2]
    assert all(math.isfinite(x) for x in losses)
    assert train[-1] < train[0] - 0.1 and valid[-1] < valid[0] - 0.05, losses
    for got, want in zip(losses, fp32_losses):
        assert abs(got - want) <= 1e-2 * abs(want), (losses, fp32_losses)


def write_speech_data(folder):
    """Utterances in the recipe's format: ``units`` (one phone a line), per split ``fbank.scp``
    ("utt path") and ``phn_text`` ("utt phone..."); each feature file a (frames, 81) matrix
    where each phone holds a fixed random pattern plus noise for 16-27 frames."""
    import numpy as np

    rng = np.random.default_rng(0)
    phones = ["aa", "b", "d", "iy", "k", "s", "t", "uw"]
    folder.mkdir()
    (folder / "units").write_text("\n".join(phones) + "\n")
    patterns = rng.normal(0, 1, (len(phones), 81)).astype(np.float32)
    for split, count in (("train", 16), ("dev", 8), ("test", 8)):
        (folder / split).mkdir()
        scp, labels = [], []
        for u in range(count):
            said = rng.integers(0, len(phones), rng.integers(4, 8))
            frames = [
                patterns[p] + 0.3 * rng.normal(0, 1, (int(rng.integers(16, 28)), 81)) for p in said
            ]
            path = folder / split / f"{split}{u:03d}.npy"
            np.save(str(path), np.vstack(frames).astype(np.float32))
            scp.append(f"{split}{u:03d} {path}")
            labels.append(f"{split}{u:03d} " + " ".join(phones[p] for p in said))
        (folder / split / "fbank.scp").write_text("\n".join(scp) + "\n")
        (folder / split / "phn_text").write_text("\n".join(labels) + "\n")


def ctc(work, python, amp):
    import yaml

    recipe = work / CTC / "NPU" / "1p"
    data = work / "timit"
    if not data.exists():
        write_speech_data(data)
    with open(recipe / "conf" / "ctc_config.yaml") as f:
        conf = yaml.safe_load(f)
    for key in ("vocab_file", "train_scp_path", "train_lab_path", "valid_scp_path"):
        conf[key] = conf[key].replace("data", str(data), 1)
    conf["valid_lab_path"] = conf["valid_lab_path"].replace("data", str(data), 1)
    conf.update(
        checkpoint_dir=str(work / ("ckpt-amp" if amp else "ckpt-fp32")),
        num_workers=0,
        rnn_hidden_size=32,
        rnn_layers=2,
        channel="[(1, 4), (4, 4)]",
        batch_size=4,
        num_epoches=8,
        init_lr=0.006,
    )
    with open(work / "ctc_config.yaml", "w") as f:
        yaml.safe_dump(conf, f)
    flags = ["--device_id", "0"]
    flags += ["--apex", "--loss_scale", "128", "--opt_level", "O2"] if amp else []
    flags += ["--conf", str(work / "ctc_config.yaml")]
    code, output = modelzoo.run(
        python, [str(work / "driver.py"), "ctc", "steps/train_ctc.py", *flags], recipe
    )
    assert code == 0, output[-6000:]
    losses = [float(x) for x in re.findall(r"Train done, total_loss: ([-\d.e+]+)", output)]
    best = re.search(r"End training, best dev loss is: ([\d.]+), acc is: ([\d.]+)", output)
    assert len(losses) == 8 and best, output[-4000:]
    return losses, float(best.group(2))


@pytest.mark.skipif(
    not importlib.util.find_spec("yaml") or not importlib.util.find_spec("numpy"),
    reason="the CTC recipe reads its configuration with PyYAML and its features with numpy",
)
def test_lstm_ctc_trains_in_fp16_as_in_fp32(work, python):
    losses, accuracy = ctc(work, python, amp=True)
    fp32_losses, _ = ctc(work, python, amp=False)
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < 0.3 * losses[0] and accuracy > 0, (losses, accuracy)
    for got, want in zip(losses[:5], fp32_losses[:5]):
        assert abs(got - want) <= 2e-2 * abs(want), (losses, fp32_losses)
