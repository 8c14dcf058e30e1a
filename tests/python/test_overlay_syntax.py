"""Every overlay module compiles on each supported Python (3.7 to 3.13).

Uses the real interpreters found on PATH or under pyenv; ``ast.parse(feature_version=...)``
checks the grammar of those that are missing.
"""

import ast
import glob
import os
import shutil
import subprocess

import pytest

from overlay_support import OVERLAY_DIR

SUPPORTED = [(3, minor) for minor in range(7, 14)]
SOURCES = sorted(glob.glob(os.path.join(OVERLAY_DIR, "**", "*.py"), recursive=True))


def runs(exe):
    try:
        return subprocess.run([exe, "-c", "pass"], capture_output=True, timeout=60).returncode == 0
    except OSError:
        return False


def find_interpreter(version):
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [
        os.path.join(d, "bin", "python3")
        for d in sorted(glob.glob(os.path.join(root, "versions", "%d.%d.*" % version)))
    ]
    candidates.append(shutil.which("python%d.%d" % version))  # may be a pyenv shim that fails
    for exe in candidates:
        if exe and os.access(exe, os.X_OK) and runs(exe):
            return exe
    return None


def test_overlay_has_sources():
    assert any(p.endswith(os.path.join("apex", "npu", "__init__.py")) for p in SOURCES)


@pytest.mark.parametrize("version", SUPPORTED, ids=lambda v: "py%d.%d" % v)
def test_overlay_compiles(version):
    exe = find_interpreter(version)
    if exe is None:
        for path in SOURCES:
            with open(path, encoding="utf-8") as f:
                ast.parse(f.read(), path, feature_version=version)
        return
    code = (
        "import sys\n"
        "for p in sys.argv[1:]:\n"
        "    compile(open(p, encoding='utf-8').read(), p, 'exec', dont_inherit=True)\n"
    )
    proc = subprocess.run([exe, "-c", code] + SOURCES, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
