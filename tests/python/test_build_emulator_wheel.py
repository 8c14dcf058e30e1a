"""The torch_npu emulator's wheel from `apexnpu build`: a pure-Python distribution of its own
(torch_npu_emulator, import name torch_npu) beside apex's, installed with it by pip into a venv
over Debian's torch, told apart from Huawei's torch_npu, and removed cleanly; --no-emulator
leaves it out."""
import json
import os
import shutil
import subprocess
import textwrap

import pytest

import build_helpers as bh

EPOCH = "1700000000"
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's torch lives there


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    tree = bh.write_fixture_tree(str(tmp_path_factory.mktemp("fixture")))
    # The emulator imports apex.npu: the fixture's apex package gets the overlay's device layer.
    shutil.copytree(os.path.join(bh.REPO, "patches", "overlay", "apex"), os.path.join(tree, "apex"),
                    dirs_exist_ok=True)
    out = str(tmp_path_factory.mktemp("dist"))
    proc, doc = bh.build_json(["--python=" + SYSTEM_PYTHON, "--tree", tree, "-o", out, "--wheel",
                               "--object-cache", bh.shared_cache_dir(tmp_path_factory), "-j2"],
                              env={"SOURCE_DATE_EPOCH": EPOCH})
    assert proc.returncode == 0, proc.stderr
    return doc, tree


def venv_env():
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_INPUT="1", PYTHONNOUSERSITE="1")
    env.pop("PYTHONPATH", None)
    return env


def make_venv(path):
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", path], check=True,
                   env=venv_env())
    return os.path.join(path, "bin", "python")


def pip(vpy, *args):
    return subprocess.run([vpy, "-m", "pip"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=venv_env(), universal_newlines=True)


def test_a_pure_wheel_of_its_own(dist):
    doc, _ = dist
    emulator = doc["emulator"]
    assert emulator["name"] == "torch_npu_emulator"
    assert os.path.basename(emulator["wheel"]) == "torch_npu_emulator-0.1+ascend-py3-none-any.whl"
    files = bh.read_wheel(emulator["wheel"])
    assert files == bh.read_layout(emulator["layout"])
    di = bh.check_record(files)
    assert di == "torch_npu_emulator-0.1+ascend.dist-info"
    package = {p for p in files if not p.startswith(di + "/")}
    assert "torch_npu/__init__.py" in package
    assert "torch_npu/contrib/transfer_to_npu.py" in package
    assert all(p.startswith("torch_npu/") and p.endswith(".py") for p in package), package
    source = os.path.join(bh.REPO, "src")
    for p in package:
        with open(os.path.join(source, p), "rb") as f:
            assert files[p] == f.read(), p
    meta = files[di + "/METADATA"].decode()
    for line in ("Name: torch_npu_emulator", "Version: 0.1+ascend",
                 "Requires-Dist: apex (==0.1+ascend)", "Requires-Dist: torch", "Platform: any"):
        assert line in meta, line
    assert "never install it beside Huawei's torch_npu" in meta
    wheel_meta = files[di + "/WHEEL"].decode()
    assert "Root-Is-Purelib: true" in wheel_meta and "Tag: py3-none-any" in wheel_meta
    assert files[di + "/top_level.txt"].decode().split() == ["torch_npu"]
    assert bh.run(["verify", emulator["wheel"]]).returncode == 0
    assert bh.run(["verify", emulator["layout"]]).returncode == 0


def test_a_tampered_emulator_wheel_fails_verify(dist, tmp_path):
    doc, _ = dist
    layout = str(tmp_path / "layout")
    bh.copytree(doc["emulator"]["layout"], layout)
    with open(os.path.join(layout, "torch_npu", "__init__.py"), "a") as f:
        f.write("# changed\n")
    proc = bh.run(["verify", layout])
    assert proc.returncode == 1 and "torch_npu/__init__.py" in proc.stdout + proc.stderr


def test_installs_with_apex_runs_and_uninstalls_cleanly(dist, tmp_path):
    doc, _ = dist
    vpy = make_venv(str(tmp_path / "venv"))
    before = set(bh.listing(str(tmp_path / "venv")))
    alone = pip(vpy, "install", "--no-index", doc["emulator"]["wheel"])
    assert alone.returncode != 0 and "apex" in alone.stdout  # Requires-Dist: apex (==0.1+ascend)
    both = pip(vpy, "install", "--no-index", doc["wheel"], doc["emulator"]["wheel"])
    assert both.returncode == 0, both.stdout
    code = textwrap.dedent("""
        import torch, torch_npu
        import apex.npu
        x = torch.ones(3, device="npu:2")
        print(torch_npu.__apexnpu_emulator__, apex.npu.is_real_npu(), torch.npu.device_count(),
              x.device, x.type())
    """)
    run = subprocess.run([vpy, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=venv_env(), universal_newlines=True, cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "False", "8", "npu:2", "torch.npu.FloatTensor"]
    un = pip(vpy, "uninstall", "-y", "torch_npu_emulator", "apex")
    assert un.returncode == 0, un.stdout
    left = set(bh.listing(str(tmp_path / "venv"))) - before
    assert not [p for p in left if "torch_npu" in p or "apex" in p], sorted(left)


def test_no_emulator_leaves_it_out(dist, tmp_path):
    _, tree = dist
    out = str(tmp_path / "dist")
    proc, doc = bh.build_json(["--python=" + SYSTEM_PYTHON, "--tree", tree, "-o", out, "--wheel",
                               "--no-emulator", "-j2"])
    assert proc.returncode == 0, proc.stderr
    assert doc["emulator"] is None
    assert not [f for f in os.listdir(out) if f.startswith("torch_npu")]
    with open(doc["manifest"]) as f:
        assert json.load(f)["emulator"] is None
