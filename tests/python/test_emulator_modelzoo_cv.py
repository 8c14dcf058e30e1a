"""Ascend's vision recipes from its model zoo (github.com/Ascend/ModelZoo-PyTorch,
``PyTorch/built-in/cv/classification``), unchanged, on an emulated 910 with Huawei's apex:

- ``ResNet50_for_PyTorch``: ``pytorch_resnet50_apex.py`` with the flags of its
  ``test/train_performance_1p.sh`` (apex amp O2 with a static loss scale of 1024, label
  smoothing, a cosine warm-up, torchvision's resnet50 at 224x224 from an ImageFolder), against
  the same script with ``--precision_mode=must_keep_origin_dtype`` (amp O0, fp32);
- ``CRNN_for_PyTorch``: ``main_8p.py`` with ``LMDB_config.yaml`` as its
  ``test/train_performance_1p.sh`` runs it (CNN + two LSTMs + CTC loss, amp O2,
  ``NpuFusedAdadelta``, images and labels from LMDB), against O1 (``LMDB_config_pr.yaml``'s
  level; its fused optimizer refuses O0);
- ``MobileNetV2_for_PyTorch``: ``train/mobilenetv2_8p_main_anycard.py`` with its
  ``test/train_performance_1p.sh`` flags: one process started by ``mp.spawn`` joins an hccl
  group, wraps the model in DistributedDataParallel and steps ``NpuFusedSGD`` under amp O2 with
  ``combine_grad``. Its spawned process is not seeded (the script seeds only its parent), so its
  losses are checked for being there and finite, not against another run.

They read small data made here in their own formats: a few JPEGs in ImageFolder's layout, a
few rendered words in the LMDB keys CRNN reads. Changed from the scripts' flags, for a CPU and a
few steps (a ResNet50 step at 224x224 takes seconds on one core, with or without the emulator):
no loader workers, 10 classes (the scripts' top-5 accuracy needs 5), a seed; ResNet50 a batch
of 2, 4 steps, a learning rate of 0.02 (its 0.2 is for batch 512: at a batch of a few fp32
diverges too) and an optimizer batch of 2 (its 512 would accumulate gradients for 256 steps
before one update); CRNN a batch of 4, 4 steps; MobileNetV2 a batch of 4, 12 steps (its closing
FPS line divides by the time of the steps after the 10th) and a learning rate of 0.005.

Needs APEXNPU_TEST_MODELZOO (a git directory of github.com/Ascend/ModelZoo-PyTorch, read with
``git archive`` at a pinned commit), APEXNPU_TEST_ASCEND and APEXNPU_TEST_UPSTREAM (Huawei's apex
is built as test_huawei_apex_on_emulator.py builds it), APEXNPU_BINARY, and torchvision, lmdb,
Pillow, PyYAML and easydict for the torch running the test (Debian's python3-torchvision,
python3-lmdb, python3-pil, python3-yaml, python3-easydict for torch 1.13; PyPI has only CUDA
builds of torchvision, which do not load beside the CPU torch 2.x); skips with a message
otherwise."""

import importlib.util
import io
import math
import os
import random
import re
import subprocess

import pytest

import build_helpers as bh
from overlay_support import huawei_apex, modelzoo, ranks

MODELZOO = os.environ.get("APEXNPU_TEST_MODELZOO")
ASCEND = os.environ.get("APEXNPU_TEST_ASCEND")
UPSTREAM = os.environ.get("APEXNPU_TEST_UPSTREAM")
COMMIT = "6a2804a358a5b18e3dac1ab902f41f88e240b00f"  # master of 2023-12-15
RECIPES = "PyTorch/built-in/cv/classification"
NEEDED = ("torchvision", "lmdb", "PIL", "yaml", "easydict")


def _torchvision_loads():
    """PyPI's torchvision wheels link CUDA's torch libraries and fail to import on a CPU torch."""
    try:
        import torchvision  # noqa: F401
    except Exception:
        return False
    return True


pytestmark = [
    pytest.mark.skipif(
        not MODELZOO,
        reason="APEXNPU_TEST_MODELZOO is not set (a git directory "
        "of github.com/Ascend/ModelZoo-PyTorch) to run Ascend's vision recipes",
    ),
    pytest.mark.skipif(
        not ASCEND or not UPSTREAM,
        reason="APEXNPU_TEST_ASCEND and APEXNPU_TEST_UPSTREAM must both be set (git "
        "directories of Ascend's apex and NVIDIA Apex): the recipes need Huawei's apex",
    ),
    pytest.mark.skipif(
        bool(MODELZOO)  # torchvision is imported only for a run
        and not (all(importlib.util.find_spec(m) for m in NEEDED) and _torchvision_loads()),
        reason="the vision recipes need torchvision (a CPU build for this torch), lmdb, Pillow, "
        "PyYAML and easydict (Debian: python3-torchvision python3-lmdb python3-pil "
        "python3-yaml python3-easydict)",
    ),
]


@pytest.fixture(scope="module")
def python(tmp_path_factory):
    """A venv's python holding Huawei's apex and the emulator's wheel, seeing this torch."""
    vpy, _ = huawei_apex.venv_with_huawei_apex(tmp_path_factory, ASCEND, UPSTREAM)
    return vpy


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A folder holding the recipes at the pinned commit and the tiny data sets."""
    from PIL import Image, ImageDraw

    work = tmp_path_factory.mktemp("modelzoo_cv")
    modelzoo.extract(
        COMMIT,
        [
            f"{RECIPES}/ResNet50_for_PyTorch",
            f"{RECIPES}/CRNN_for_PyTorch",
            f"{RECIPES}/MobileNetV2_for_PyTorch",
        ],
        str(work),
    )
    rng = random.Random(0)
    # ImageFolder: 4 classes told apart by the colour of their rectangles.
    for root, split, count in (
        ("imagenet", "train", 2),
        ("imagenet", "val", 1),
        ("imagenet12", "train", 12),
        ("imagenet12", "val", 1),
    ):
        for label in range(4):
            folder = work / root / split / f"n{label:08d}"
            folder.mkdir(parents=True)
            for i in range(count):
                img = Image.new("RGB", (64, 48), tuple(rng.randrange(256) for _ in range(3)))
                draw = ImageDraw.Draw(img)
                for _ in range(6):
                    x, y = rng.randrange(64), rng.randrange(48)
                    colour = (255 * (label & 1), 255 * (label >> 1), 128)
                    draw.rectangle([x, y, x + 10, y + 8], fill=colour)
                img.save(str(folder / f"img{i}.JPEG"), quality=90)
    # CRNN's LMDB: num-samples, image-%09d (an encoded image), label-%09d, from 1.
    import lmdb

    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    for name, count in (("MJ_LMDB", 16), ("IIIT5K_lmdb", 4)):
        (work / "ocr").mkdir(exist_ok=True)
        env = lmdb.open(str(work / "ocr" / name), map_size=1 << 24)
        with env.begin(write=True) as txn:
            for i in range(1, count + 1):
                text = "".join(rng.choice(alphabet) for _ in range(rng.randint(3, 6)))
                img = Image.new("L", (100, 32), 255)
                ImageDraw.Draw(img).text((4, 10), text, fill=0)
                buf = io.BytesIO()
                img.save(buf, format="PNG")
                txn.put(b"image-%09d" % i, buf.getvalue())
                txn.put(b"label-%09d" % i, text.encode())
            txn.put(b"num-samples", str(count).encode())
        env.close()
    return work


def run(python, args, cwd):
    """(return code, output) of the recipe's script run by the venv's python on a 910."""
    env = dict(bh.venv_env(), OMP_NUM_THREADS="1", RANK_SIZE="1")
    env.pop("APEXNPU_SOC_VERSION", None)  # the default chip, an Ascend910A
    proc = subprocess.run(
        [python, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    return proc.returncode, proc.stdout + proc.stderr


def resnet50(python, work, precision_mode):
    directory = str(work / RECIPES / "ResNet50_for_PyTorch")
    ckpt = work / f"ckpt-{precision_mode}"
    ckpt.mkdir(exist_ok=True)
    code, output = run(
        python,
        [
            "pytorch_resnet50_apex.py",
            "--data",
            str(work / "imagenet"),
            "--npu",
            "0",
            "-j",
            "0",
            "-b",
            "2",
            "--lr",
            "0.02",
            "--warmup",
            "5",
            f"--precision_mode={precision_mode}",
            "--label-smoothing=0.1",
            "--epochs",
            "1",
            "--optimizer-batch-size",
            "2",
            "--num_classes",
            "10",
            "--seed",
            "1",
            "--save_ckpt_path",
            str(ckpt),
        ],
        directory,
    )
    assert code == 0, output[-6000:]
    return step_losses(output), output


def step_losses(output):
    """Each step's loss, as the recipes' ProgressMeter prints it (fields apart by tabs):
    "Epoch: [0][i/4]  Time ...  Data ...  Loss <this step> (<average>)"."""
    return [float(x) for x in re.findall(r"^Epoch: \[0\]\[\d+/4\].*?\tLoss (\S+) ", output, re.M)]


def test_resnet50_o2_trains_as_fp32_does(python, work):
    fp32, _ = resnet50(python, work, "must_keep_origin_dtype")
    o2, output = resnet50(python, work, "allow_mix_precision")
    assert "opt_level              : O2" in output and "loss_scale             : 1024.0" in output
    assert len(o2) == len(fp32) == 4, output[-3000:]
    assert all(math.isfinite(x) for x in o2), o2
    # The first loss is fp16's forward against fp32's; the next come after fp16 steps.
    assert abs(o2[0] - fp32[0]) <= 1e-3 * fp32[0], (o2, fp32)
    for got, want in zip(o2, fp32):
        assert abs(got - want) <= 2e-2 * abs(want), (o2, fp32)


def crnn(python, work, opt_level):
    directory = work / RECIPES / "CRNN_for_PyTorch"
    # Its test script's edits of LMDB_config.yaml (batch, epochs, data), and ours for a CPU.
    config = (directory / "LMDB_config.yaml").read_text()
    for pattern, value in (
        (r"^WORKERS:.*$", "WORKERS: 0"),
        (r"^OUTPUT_DIR:.*$", f"OUTPUT_DIR: {work / ('crnn-' + opt_level)}"),
        (r"BATCH_SIZE_PER_GPU:.*$", "BATCH_SIZE_PER_GPU: 4"),
        (r"END_EPOCH:.*$", "END_EPOCH: 1"),
        (r"TRAIN_ROOT:.*$", f"TRAIN_ROOT: {work / 'ocr' / 'MJ_LMDB'}"),
        (r"TEST_ROOT:.*$", f"TEST_ROOT: {work / 'ocr' / 'IIIT5K_lmdb'}"),
        (r"OPT_LEVEL:.*$", f"OPT_LEVEL: {opt_level}"),
    ):
        config, count = re.subn(pattern, value, config, flags=re.M)
        assert count, pattern
    path = work / f"crnn-{opt_level}.yaml"
    path.write_text(config)
    code, output = run(python, ["main_8p.py", "--cfg", str(path), "--npu", "0"], str(directory))
    assert code == 0, output[-6000:]
    return step_losses(output), output


def test_crnn_o2_with_npu_fused_adadelta_trains_as_o1_does(python, work):
    o1, _ = crnn(python, work, "O1")
    o2, output = crnn(python, work, "O2")
    assert (
        "Use npu fused optimizer" in output and "cast_model_type        : torch.float16" in output
    )
    assert len(o2) == len(o1) == 4, output[-3000:]
    assert all(math.isfinite(x) for x in o2), o2
    assert o2[-1] < o2[0] / 2, o2  # CTC's loss falls from its start at random weights
    for got, want in zip(o2, o1):
        assert abs(got - want) <= 1e-2 * abs(want), (o2, o1)


def test_mobilenetv2_trains_in_a_spawned_hccl_process_with_combined_grads(python, work):
    directory = str(work / RECIPES / "MobileNetV2_for_PyTorch")
    code, output = run(
        python,
        [
            "train/mobilenetv2_8p_main_anycard.py",
            "--addr=127.0.0.1",
            f"--port={ranks.free_port()}",
            "--seed",
            "49",
            "--workers",
            "0",
            "--lr",
            "0.005",
            "--print-freq",
            "1",
            "--eval-freq",
            "1",
            "--dist-backend",
            "hccl",
            "--multiprocessing-distributed",
            "--world-size",
            "1",
            "--class-nums",
            "10",
            "--batch-size",
            "4",
            "--epochs",
            "1",
            "--rank",
            "0",
            "--device-list",
            "0",
            "--amp",
            "--benchmark",
            "0",
            "--data",
            str(work / "imagenet12"),
        ],
        directory,
    )
    assert code == 0, output[-6000:]
    assert "combine_grad           : True" in output and "Use npu fused optimizer" in output
    losses = [float(x) for x in re.findall(r"Epoch: \[0\]\[\s*\d+/12\].*?\tLoss (\S+) ", output)]
    assert len(losses) == 12 and all(math.isfinite(x) for x in losses), output[-3000:]
    assert "* FPS@all" in output
