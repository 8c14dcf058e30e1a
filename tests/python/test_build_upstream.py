"""The main job end to end on real upstream Apex (needs APEXNPU_TEST_UPSTREAM, a path or URL of an
NVIDIA Apex git repository): `gen`, `build --python=3.11 --wheel`, install into a venv that sees
Debian's python3-torch (--system-site-packages), import apex, apex.amp, apex.optimizers."""

import os
import subprocess

import pytest

import build_helpers as bh

UPSTREAM = os.environ.get("APEXNPU_TEST_UPSTREAM")


def test_gen_build_install_import(tmp_path, tmp_path_factory):
    if not UPSTREAM:
        pytest.skip("APEXNPU_TEST_UPSTREAM is not set (path or URL of an NVIDIA Apex repository)")
    if bh.run(["gen", "--help"]).returncode != 0:
        pytest.skip("`apexnpu gen` is not available in this build yet")
    if not os.path.exists("/usr/bin/python3.11"):
        pytest.skip("needs /usr/bin/python3.11 (Debian's, with python3-torch)")
    tree = str(tmp_path / "apex-tree")
    gen = bh.run(["gen", "--upstream", UPSTREAM, "-o", tree])
    assert gen.returncode == 0, gen.stderr
    proc, doc = bh.build_json(
        [
            "--python=/usr/bin/python3.11",
            "--tree",
            tree,
            "-o",
            str(tmp_path / "dist"),
            "--wheel",
            "--object-cache",
            bh.shared_cache_dir(tmp_path_factory),
        ]
    )
    assert proc.returncode == 0, proc.stderr
    assert bh.run(["verify", doc["wheel"]]).returncode == 0
    # The main command: build without --tree runs gen itself; same wheel contents, and the
    # manifest then records where the tree came from.
    proc, direct = bh.build_json(
        [
            "--python=/usr/bin/python3.11",
            "--upstream",
            UPSTREAM,
            "-o",
            str(tmp_path / "dist-direct"),
            "--wheel",
            "--object-cache",
            bh.shared_cache_dir(tmp_path_factory),
        ]
    )
    assert proc.returncode == 0, proc.stderr
    assert direct["compiled"] == 0
    ours = {p: b for p, b in bh.read_wheel(direct["wheel"]).items() if "dist-info" not in p}
    theirs = {p: b for p, b in bh.read_wheel(doc["wheel"]).items() if "dist-info" not in p}
    assert ours == theirs
    import json

    with open(direct["manifest"]) as f:
        source = json.load(f)["source"]
    assert source["tree"] == "gen" and len(source["upstream_commit"]) == 40
    venv = str(tmp_path / "venv")
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    subprocess.run(
        ["/usr/bin/python3.11", "-m", "venv", "--system-site-packages", venv], check=True, env=env
    )
    vpy = os.path.join(venv, "bin", "python")
    # apex reaches the NPU through torch_npu: the emulator's wheel of the build beside it.
    inst = subprocess.run(
        [vpy, "-m", "pip", "install", "--no-index", doc["wheel"], doc["emulator"]["wheel"]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        universal_newlines=True,
    )
    assert inst.returncode == 0, inst.stdout
    imp = subprocess.run(
        [
            vpy,
            "-c",
            "import apex, apex.amp, apex.optimizers, change_data_ptr; "
            "from apex import _apexnpu; print(_apexnpu.runtime_version())",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        universal_newlines=True,
        cwd=str(tmp_path),
    )
    assert imp.returncode == 0, imp.stderr
