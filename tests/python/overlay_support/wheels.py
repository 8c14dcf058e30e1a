"""apex's and the emulator's wheels built from NVIDIA Apex at ``APEXNPU_TEST_UPSTREAM`` and
installed into a venv over the torch of the Python running the test (Debian's 1.13 or the torch
2.x venv's), for the tests that need apex.amp."""

from __future__ import annotations

import os
import subprocess
import sys

import build_helpers as bh


def installed_wheels_env(tmp_path_factory) -> dict:
    """The environment of a venv holding the installed wheels (``APEXNPU_VENV_PYTHON`` names
    its python); skips the calling test when APEXNPU_TEST_UPSTREAM or APEXNPU_BINARY is unset."""
    import pytest

    upstream = os.environ.get("APEXNPU_TEST_UPSTREAM")
    binary = os.environ.get("APEXNPU_BINARY")
    if not upstream or not binary:
        pytest.skip(
            "APEXNPU_TEST_UPSTREAM is not set (path or URL of an NVIDIA Apex "
            "repository): apex.amp comes from upstream"
        )
    work = tmp_path_factory.mktemp("wheels")
    tree, dist = str(work / "apex"), str(work / "dist")
    for args in (
        ["gen", "--upstream", upstream, "-o", tree],
        ["-q", "build", "--python=" + sys.executable, "--tree", tree, "-o", dist, "--wheel", "-j2"],
    ):
        proc = subprocess.run([binary] + args, capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, proc.stderr
    wheels = sorted(os.path.join(dist, f) for f in os.listdir(dist) if f.endswith(".whl"))
    vpy = bh.make_torch_venv(str(work / "venv"))
    inst = bh.pip(vpy, "install", "--no-index", "--no-deps", *wheels)
    assert inst.returncode == 0, inst.stdout
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    env["PATH"] = os.path.dirname(vpy) + os.pathsep + env["PATH"]
    env["APEXNPU_VENV_PYTHON"] = vpy
    return env


def amp_venv(tmp_path_factory, name: str) -> str:
    """The python of a venv holding apex's and the emulator's wheels, built by apexnpu from a
    tree gen made of APEXNPU_TEST_UPSTREAM (or from APEXNPU_TEST_APEX_TREE, a tree made
    already), for the amp scenarios; skips the calling test without the binary or upstream."""
    import pytest

    binary = os.environ.get("APEXNPU_BINARY")
    if not binary:
        pytest.skip("APEXNPU_BINARY is not set (the apexnpu binary to build the wheel with)")

    def apexnpu(*args: str, timeout: int) -> subprocess.CompletedProcess:
        return subprocess.run(
            [binary] + list(args), capture_output=True, text=True, timeout=timeout
        )

    work = tmp_path_factory.mktemp(name)
    tree = os.environ.get("APEXNPU_TEST_APEX_TREE")
    if not tree:
        upstream = os.environ.get("APEXNPU_TEST_UPSTREAM")
        if not upstream:
            pytest.skip(
                "APEXNPU_TEST_UPSTREAM is not set (path or URL of an NVIDIA Apex repository)"
            )
        tree = str(work / "apex-tree")
        gen = apexnpu("gen", "--upstream", upstream, "-o", tree, timeout=1200)
        assert gen.returncode == 0, gen.stderr
    dist = str(work / "dist")
    build = apexnpu(
        "-q",
        "build",
        "--python=" + sys.executable,
        "--tree",
        tree,
        "-o",
        dist,
        "--wheel",
        "-j2",
        timeout=1800,
    )
    assert build.returncode == 0, build.stderr
    wheels = sorted(f for f in os.listdir(dist) if f.endswith(".whl"))
    assert len(wheels) == 2, wheels  # apex and the torch_npu emulator
    vpy = bh.make_torch_venv(str(work / "venv"))
    inst = bh.pip(
        vpy, "install", "--no-index", "--no-deps", *[os.path.join(dist, w) for w in wheels]
    )
    assert inst.returncode == 0, inst.stdout
    return vpy
