"""Ascend's model zoo (github.com/Ascend/ModelZoo-PyTorch) for the tests that run its recipes:
the git directory APEXNPU_TEST_MODELZOO names, read in place."""

from __future__ import annotations

import os
import subprocess
import tarfile
from typing import Sequence

GIT_DIR = os.environ.get("APEXNPU_TEST_MODELZOO")


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
