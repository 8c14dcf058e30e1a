"""The torch_npu emulator's wheel from `apexnpu build`: a distribution of its own
(torch_npu_emulator, import name torch_npu) carrying the runtime's binding for CPython 3.7's stable
ABI, one per architecture; installed alone into a venv over the torch running the test, it trains
under torch.npu.amp with nothing of apex; apex's wheel installs beside it and finds it as its
NPU; both are removed cleanly; --no-emulator leaves it out. A module the two packages share
(the fused optimizers' descriptions) is the same bytes in both wheels, from its one source in the
overlay."""

import json
import os
import shutil
import subprocess
import textwrap

import pytest

import build_helpers as bh

EPOCH = "1700000000"
SYSTEM_PYTHON = bh.SYSTEM_PYTHON


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    tree = bh.write_fixture_tree(str(tmp_path_factory.mktemp("fixture")))
    # apex's additions for the NPU, so that apex beside the emulator finds it.
    shutil.copytree(
        os.path.join(bh.REPO, "patches", "overlay", "apex"),
        os.path.join(tree, "apex"),
        dirs_exist_ok=True,
    )
    # Upstream's apex.optimizers package, which the overlay's optimizers join.
    bh.write_files({"apex/optimizers/__init__.py": ""}, tree)
    out = str(tmp_path_factory.mktemp("dist"))
    doc = bh.build_for_system_python(
        tree,
        out,
        bh.shared_cache_dir(tmp_path_factory),
        "--wheel",
        env={"SOURCE_DATE_EPOCH": EPOCH},
    )
    return doc, tree


def test_a_wheel_of_its_own_with_the_runtime(dist):
    doc, _ = dist
    emulator = doc["emulator"]
    assert emulator["name"] == "torch_npu_emulator"
    tag = "cp37-abi3-" + bh.PLATFORM_TAG
    assert os.path.basename(emulator["wheel"]) == f"torch_npu_emulator-0.1+ascend-{tag}.whl"
    assert doc["emulators"] == [emulator]
    files = bh.read_wheel(emulator["wheel"])
    assert files == bh.read_layout(emulator["layout"])
    di = bh.check_record(files)
    assert di == "torch_npu_emulator-0.1+ascend.dist-info"
    package = {p for p in files if not p.startswith(di + "/")}
    assert "torch_npu/__init__.py" in package
    assert "torch_npu/contrib/transfer_to_npu.py" in package
    # The runtime is apex's very binding, named for every Python 3.7+.
    runtime = "torch_npu/_apexnpu.abi3.so"
    apex_files = bh.read_wheel(doc["wheel"])
    (apex_runtime,) = [p for p in apex_files if p.startswith("apex/_apexnpu")]
    assert files[runtime] == apex_files[apex_runtime]
    python_files = package - {runtime}
    assert all(p.startswith("torch_npu/") and p.endswith(".py") for p in python_files), package
    source = os.path.join(bh.REPO, "src")
    for p in python_files:
        with open(os.path.join(source, p), "rb") as f:
            assert files[p] == f.read(), p
    meta = files[di + "/METADATA"].decode()
    for line in ("Name: torch_npu_emulator", "Version: 0.1+ascend", "Requires-Dist: torch"):
        assert line in meta, line
    assert "Requires-Dist: apex" not in meta  # it needs none of apex
    assert "never install it beside Huawei's torch_npu" in meta
    wheel_meta = files[di + "/WHEEL"].decode()
    assert "Root-Is-Purelib: false" in wheel_meta
    for t in bh.PLATFORM_TAG.split("."):
        assert f"Tag: cp37-abi3-{t}" in wheel_meta
    assert files[di + "/top_level.txt"].decode().split() == ["torch_npu"]
    assert bh.run(["verify", emulator["wheel"]]).returncode == 0
    assert bh.run(["verify", emulator["layout"]]).returncode == 0
    with open(doc["manifest"]) as f:
        assert json.load(f)["emulator"]["file"] == os.path.basename(emulator["wheel"])


def shared_modules():
    """(overlay path, torch_npu path) of each module torch_npu's source links from the overlay."""
    overlay = os.path.join(bh.REPO, "patches", "overlay")
    source = os.path.join(bh.REPO, "src")
    pairs = []
    for folder, _, names in os.walk(os.path.join(source, "torch_npu")):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                target = os.path.realpath(path)
                assert target.startswith(overlay + os.sep), (path, target)
                pairs.append((os.path.relpath(target, overlay), os.path.relpath(path, source)))
    return pairs


def test_both_wheels_carry_the_shared_modules_byte_for_byte(dist):
    doc, _ = dist
    pairs = shared_modules()
    assert ("apex/optimizers/optimizer_kinds.py", "torch_npu/optim/_optimizer_kinds.py") in pairs
    emulator = bh.read_wheel(doc["emulator"]["wheel"])
    apex = bh.read_wheel(doc["wheel"])
    for overlay_path, emulator_path in pairs:
        with open(os.path.join(bh.REPO, "patches", "overlay", overlay_path), "rb") as f:
            source = f.read()
        assert emulator[emulator_path] == source, emulator_path
        assert apex[overlay_path] == source, overlay_path


def test_a_tampered_emulator_wheel_fails_verify(dist, tmp_path):
    doc, _ = dist
    layout = str(tmp_path / "layout")
    bh.copytree(doc["emulator"]["layout"], layout)
    with open(os.path.join(layout, "torch_npu", "__init__.py"), "a") as f:
        f.write("# changed\n")
    proc = bh.run(["verify", layout])
    assert proc.returncode == 1 and "torch_npu/__init__.py" in proc.stdout + proc.stderr


TRAIN_UNDER_NPU_AMP = textwrap.dedent("""
    import importlib.util
    import torch, torch_npu
    from torch_npu import _runtime
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 1)).npu()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.npu.amp.GradScaler()
    x = torch.randn(64, 8).npu()
    y = x.sum(1, keepdim=True)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        with torch.npu.amp.autocast():
            out = model(x)
        loss = torch.nn.functional.mse_loss(out.float(), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    print(losses[-1] < 0.2 * losses[0], out.dtype, out.device, torch.__version__.split(".")[0],
          importlib.util.find_spec("apex") is None, _runtime.runtime() is not None)
""")


def test_alone_it_trains_under_npu_amp_then_apex_installs_beside(dist, tmp_path):
    import torch

    doc, _ = dist
    vpy = bh.make_torch_venv(str(tmp_path / "venv"))
    before = set(bh.listing(str(tmp_path / "venv")))
    alone = bh.pip(vpy, "install", "--no-index", "--no-deps", doc["emulator"]["wheel"])
    assert alone.returncode == 0, alone.stdout
    run = subprocess.run(
        [vpy, "-c", TRAIN_UNDER_NPU_AMP],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=bh.venv_env(),
        universal_newlines=True,
        cwd=str(tmp_path),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [
        "True",
        "torch.float16",
        "npu:0",
        torch.__version__.split(".")[0],
        "True",
        "True",
    ]
    both = bh.pip(vpy, "install", "--no-index", "--no-deps", doc["wheel"])
    assert both.returncode == 0, both.stdout
    code = textwrap.dedent("""
        import torch, torch_npu
        import apex.npu
        x = torch.ones(3, device="npu:2")
        print(torch_npu.__apexnpu_emulator__, apex.npu.is_real_npu(), torch.npu.device_count(),
              x.device, x.type(), apex.npu.backend.runtime() is not None)
    """)
    run = subprocess.run(
        [vpy, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=bh.venv_env(),
        universal_newlines=True,
        cwd=str(tmp_path),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "False", "8", "npu:2", "torch.npu.FloatTensor", "True"]
    un = bh.pip(vpy, "uninstall", "-y", "torch_npu_emulator", "apex")
    assert un.returncode == 0, un.stdout
    left = set(bh.listing(str(tmp_path / "venv"))) - before
    assert not [p for p in left if "torch_npu" in p or "apex" in p], sorted(left)


def test_no_emulator_leaves_it_out(dist, tmp_path):
    _, tree = dist
    out = str(tmp_path / "dist")
    proc, doc = bh.build_json(
        ["--python=" + SYSTEM_PYTHON, "--tree", tree, "-o", out, "--wheel", "--no-emulator", "-j2"]
    )
    assert proc.returncode == 0, proc.stderr
    assert doc["emulator"] is None
    assert not [f for f in os.listdir(out) if f.startswith("torch_npu")]
    with open(doc["manifest"]) as f:
        assert json.load(f)["emulator"] is None
