"""Makes the overlay importable without upstream Apex: ``patches/overlay`` goes on sys.path, so
``apex`` is a namespace package holding only the overlay's modules."""
from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
OVERLAY_DIR = os.path.join(REPO_ROOT, "patches", "overlay")


def use_overlay() -> str:
    """Put the overlay first on sys.path (idempotent) and return its directory."""
    if OVERLAY_DIR not in sys.path:
        sys.path.insert(0, OVERLAY_DIR)
    import apex

    where = list(getattr(apex, "__path__", []))
    if os.path.join(OVERLAY_DIR, "apex") not in where:
        raise RuntimeError(f"'apex' resolves to {where}, not to the overlay in {OVERLAY_DIR}")
    return OVERLAY_DIR


def overlay_env() -> dict:
    """Environment for a child Python that imports the overlay."""
    env = dict(os.environ)
    env["PYTHONPATH"] = OVERLAY_DIR + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("APEXNPU_OPTIM_PATH", None)  # the child has no runtime on its path
    return env


def runtime_dir():
    """A directory holding ``apex/_apexnpu*.so`` built from this checkout, for sys.path.

    Built with ``$APEXNPU_BINARY build`` from a tree holding only the overlay (the binary
    compiles the runtime; upstream Apex is not needed). Returns None, with the reason in
    ``RUNTIME_SKIP_REASON``, when APEXNPU_BINARY is unset; a failing build raises.
    """
    import glob
    import shutil
    import subprocess
    import tempfile

    global RUNTIME_SKIP_REASON
    binary = os.environ.get("APEXNPU_BINARY")
    if not binary or not os.access(binary, os.X_OK):
        RUNTIME_SKIP_REASON = "APEXNPU_BINARY is not set: cannot build the runtime apex._apexnpu"
        return None
    import atexit

    base = os.environ.get("APEXNPU_BUILD_DIR") or tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    work = tempfile.mkdtemp(prefix="overlay-runtime-", dir=base)
    atexit.register(shutil.rmtree, work, True)  # the loaded module stays mapped
    tree = os.path.join(work, "tree")
    shutil.copytree(os.path.join(OVERLAY_DIR, "apex"), os.path.join(tree, "apex"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(os.path.join(tree, "apex", "__init__.py"), "w") as f:
        f.write('"""Package root stand-in: the tests build only the runtime."""\n')
    proc = subprocess.run([binary, "-q", "build", "--python=" + sys.executable, "--tree", tree,
                           "--allow-foreign-tree", "-o", os.path.join(work, "dist"), "-j2"],
                          capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        raise RuntimeError("apexnpu build failed (%d):\n%s%s" % (proc.returncode, proc.stdout,
                                                                 proc.stderr))
    built = glob.glob(os.path.join(work, "dist", "*", "apex", "_apexnpu*.so"))
    if len(built) != 1:
        raise RuntimeError("apexnpu build wrote %d apex/_apexnpu modules in %s" % (len(built), work))
    target = os.path.join(work, "runtime")
    os.makedirs(os.path.join(target, "apex"))
    shutil.copy(built[0], os.path.join(target, "apex"))
    return target


RUNTIME_SKIP_REASON = ""


def run_with_emulator(code: str) -> list:
    """Run ``code`` (dedented) in a fresh interpreter with the overlay and the emulator's
    torch_npu (src/) importable; returns its stdout split into words. A failure asserts."""
    import subprocess
    import textwrap

    env = overlay_env()
    env["PYTHONPATH"] = os.path.join(REPO_ROOT, "src") + os.pathsep + env["PYTHONPATH"]
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split()


def select_kernel_path(path: str, monkeypatch, runtime: "str | None") -> str:
    """For a test parameterised over APEXNPU_OPTIM_PATH: select ``path`` ("torch" or "runtime");
    "runtime" is skipped, with the reason, when ``runtime`` (runtime_dir()'s answer) is None."""
    if path == "runtime" and runtime is None:
        import pytest

        pytest.skip(RUNTIME_SKIP_REASON)
    monkeypatch.setenv("APEXNPU_OPTIM_PATH", path)
    return path
