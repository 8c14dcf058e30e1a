"""Ascend's Transformer translation recipe from its model zoo
(github.com/Ascend/ModelZoo-PyTorch, ``PyTorch/built-in/nlp/Transformer_ID0105_for_PyTorch``),
its own code unchanged, on an emulated 910 as its ``test/train_full_1p.sh`` runs it: a
fairseq-style encoder-decoder trained by ``train_1p.py`` with the recipe's own copy of apex.amp
(``optim/cpex``: O2 with ``combine_grad``, a static loss scale), its ``CombinedAdam`` (which
fuses tensors with the top-level ``change_data_ptr`` module Ascend's apex installs, as apex's
wheel built here does), label-smoothed cross entropy over ``IntTensor`` targets, hand-written
attention (``addmm``, ``bmm``) and checkpoints holding amp's state and master weights.

The data is a synthetic corpus (each German sentence is its English one reversed, over a 300-word
vocabulary), binarised by the recipe's own ``preprocess.py``. The model is the script's
``transformer_wmt_en_de`` at a tiny size (2 layers, width 64); batches, epochs and the warm-up
are the tiny run's. What the recipe imports that is not here stands in: NVIDIA's dllogger (not on
PyPI; it only logs) prints its records; numpy's aliases ``np.float``/``np.int``, removed in numpy
1.24, are the builtins they named; on torch 2.x, ``torch._six`` (removed in torch 2.0; the recipe
is from torch 1.x's time) holds the three names the recipe's amp takes from it.

Checks: O2 trains (finite losses, falling) to the losses of the same seeded run in fp32 within
0.5% per step; and a third epoch resumed from the O2 run's ``checkpoint_last.pt`` (amp's loss
scaler, master weights, Adam's moments) carries on where it stopped: the recipe reports the
epoch and update it loaded, and the validation loss keeps falling.

Needs APEXNPU_TEST_MODELZOO (a git directory of the model zoo, read with ``git archive`` at a
pinned commit), APEXNPU_BINARY and APEXNPU_TEST_UPSTREAM (apex's wheel, with its
``change_data_ptr``, is built by ``apexnpu``); skips with a message otherwise."""

import json
import math
import os
import random
import re
import shutil

import pytest

from overlay_support import modelzoo

MODELZOO = os.environ.get("APEXNPU_TEST_MODELZOO")
COMMIT = "6a2804a358a5b18e3dac1ab902f41f88e240b00f"  # master of 2023-12-15
RECIPE = "PyTorch/built-in/nlp/Transformer_ID0105_for_PyTorch"

pytestmark = pytest.mark.skipif(
    not MODELZOO,
    reason="APEXNPU_TEST_MODELZOO is not set (a git directory of "
    "github.com/Ascend/ModelZoo-PyTorch) to run Ascend's Transformer recipe",
)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """The recipe at COMMIT, the driver, and the synthetic corpus binarised by the recipe."""
    work = tmp_path_factory.mktemp("modelzoo_transformer")
    modelzoo.extract(COMMIT, [RECIPE], str(work))
    shutil.copy(modelzoo.DRIVER, work / "driver.py")
    raw = work / "raw"
    raw.mkdir()
    rng = random.Random(0)
    words = [f"w{i}" for i in range(300)]
    for split, count in (("train", 400), ("valid", 40), ("test", 40)):
        sentences = [[rng.choice(words) for _ in range(rng.randint(4, 20))] for _ in range(count)]
        (raw / f"{split}.en").write_text("".join(" ".join(s) + "\n" for s in sentences))
        (raw / f"{split}.de").write_text("".join(" ".join(s[::-1]) + "\n" for s in sentences))
    return work


@pytest.fixture(scope="module")
def python(tmp_path_factory):
    """A venv's python holding apex's and the emulator's wheels (skips without them)."""
    from overlay_support import wheels

    return wheels.amp_venv(tmp_path_factory, "modelzoo-transformer-wheels")


def run(python, work, args, **env):
    """The recipe's script with the driver, on an emulated 910; its output (asserts success)."""
    code, output = modelzoo.run(
        python, [str(work / "driver.py"), *args], work / RECIPE, timeout=900, **env
    )
    assert code == 0, output[-6000:]
    return output


@pytest.fixture(scope="module")
def data(work, python):
    out = work / "bin"
    raw = work / "raw"
    flags = ["--source-lang", "en", "--target-lang", "de", "--joined-dictionary"]
    for split in ("train", "valid", "test"):
        flags += [f"--{split}pref", str(raw / split)]
    run(python, work, ["preprocess.py", *flags, "--destdir", str(out)])
    return out


def train(python, work, data, save_dir, epochs, amp, **env):
    """``train_1p.py`` with train_full_1p.sh's flags at a tiny size: (per-update losses,
    validation losses, output)."""
    flags = [str(data), "--device-id", "0", "--arch", "transformer_wmt_en_de"]
    flags += ["--share-all-embeddings", "--encoder-layers", "2", "--decoder-layers", "2"]
    for side in ("encoder", "decoder"):
        flags += [f"--{side}-embed-dim", "64", f"--{side}-ffn-embed-dim", "128"]
        flags += [f"--{side}-attention-heads", "4"]
    flags += ["--optimizer", "adam", "--adam-beta1", "0.9", "--adam-beta2", "0.997"]
    flags += ["--adam-eps", "1e-9", "--clip-norm", "0.0", "--lr-scheduler", "inverse_sqrt"]
    flags += ["--warmup-init-lr", "0.0", "--warmup-updates", "10", "--lr", "0.0006"]
    flags += ["--min-lr", "0.0", "--dropout", "0.1", "--weight-decay", "0.0"]
    flags += ["--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1"]
    flags += ["--max-sentences", "32", "--max-tokens", "2048", "--seed", "1"]
    flags += ["--save-dir", str(save_dir), "--save-interval", "1", "--update-freq", "2"]
    flags += ["--log-interval", "1", "--stat-file", str(save_dir / "log.txt")]
    flags += ["--distributed-world-size", "1", "--max-epoch", str(epochs)]
    flags += ["--amp", "--amp-level", "O2"] if amp else []
    output = run(python, work, ["train_1p.py", *flags], **env)
    records = [json.loads(d) for d in re.findall(r"^DLL \d+ (\{.*\})$", output, re.M)]
    losses = [r["loss"] for r in records if "loss" in r]
    valid = [float(x) for x in re.findall(r"Validation loss on subset valid: ([\d.]+)", output)]
    return losses, valid, output


def test_transformer_trains_in_fp16_as_in_fp32_and_resumes(work, python, data):
    amp_dir, fp32_dir = work / "ckpt-amp", work / "ckpt-fp32"
    losses, valid, output = train(python, work, data, amp_dir, epochs=2, amp=True)
    assert "opt_level              : O2" in output and "combine_grad           : True" in output
    fp32_losses, fp32_valid, _ = train(python, work, data, fp32_dir, epochs=2, amp=False)
    assert len(losses) == 12 and len(valid) == 2, output[-4000:]
    assert all(math.isfinite(x) for x in losses + valid)
    assert losses[-1] < losses[0] - 0.3 and valid[1] < valid[0], (losses, valid)
    for got, want in zip(losses + valid, fp32_losses + fp32_valid):
        assert abs(got - want) <= 5e-3 * abs(want), (losses, valid, fp32_losses, fp32_valid)

    # torch >= 2.6 loads only weights by default, the NPU's torch too; the recipe's checkpoint
    # holds its argparse namespace, so it is loaded as torch 1.x loaded it.
    resumed, resumed_valid, output = train(
        python, work, data, amp_dir, epochs=3, amp=True, TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1"
    )
    assert "(epoch 2 @ 12 updates)" in output, output[-4000:]
    assert len(resumed) == 6 and all(math.isfinite(x) for x in resumed), output[-4000:]
    assert resumed_valid[-1] < valid[-1], (valid, resumed_valid)
