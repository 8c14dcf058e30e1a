"""Ascend's model zoo (github.com/Ascend/ModelZoo-PyTorch) for the tests that run its recipes:
the git directory APEXNPU_TEST_MODELZOO names, read in place."""

from __future__ import annotations

import os
import subprocess
import tarfile
from typing import Dict, Sequence

GIT_DIR = os.environ.get("APEXNPU_TEST_MODELZOO")
# The recipes' driver (``python driver.py SCRIPT ARGS...``), copied beside a recipe to run it.
DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modelzoo_driver.py")


def extract(commit: str, paths: Sequence[str], into: str) -> None:
    """Write the model zoo's ``paths`` at ``commit`` under ``into``, at their repository paths."""
    archive = os.path.join(into, "modelzoo.tar")
    with open(archive, "wb") as out:
        subprocess.run(
            ["git", "--git-dir", GIT_DIR, "archive", commit, *paths], stdout=out, check=True
        )
    with tarfile.open(archive) as tar:
        tar.extractall(into)
    os.remove(archive)


def _environment(env: Dict[str, str]) -> Dict[str, str]:
    """An emulated 910, one torch thread, without this process's PYTHONPATH (the venv holds apex
    and the emulator); ``env`` adds variables."""
    environ = dict(os.environ, OMP_NUM_THREADS="1", APEXNPU_SOC_VERSION="Ascend910A")
    environ.pop("PYTHONPATH", None)
    environ.update(env)
    return environ


def run(python: str, args: Sequence[str], cwd: str, timeout: int = 600, **env: str):
    """(return code, output) of ``python args...`` in ``cwd`` (see ``_environment``)."""
    proc = subprocess.run(
        [python, *args],
        cwd=str(cwd),
        env=_environment(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout + proc.stderr


def start(python: str, args: Sequence[str], cwd: str, log: str, **env: str) -> subprocess.Popen:
    """``python args...`` started in ``cwd`` (see ``_environment``), its output going to the
    file ``log``, for recipes that launch one process per NPU themselves."""
    with open(log, "w") as out:
        return subprocess.Popen(
            [python, *args],
            cwd=str(cwd),
            env=_environment(env),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
