"""Makes the overlay importable without upstream Apex: ``patches/overlay`` goes on sys.path, so
``apex`` is a namespace package holding only the overlay's modules; beside it the emulator's
``torch_npu``, from its source (``src/``) or, with the compiled runtime, as ``apexnpu build``
laid out its wheel."""

from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
OVERLAY_DIR = os.path.join(REPO_ROOT, "patches", "overlay")
SRC_DIR = os.path.join(REPO_ROOT, "src")  # the emulator's torch_npu, without its runtime


def use_overlay(runtime: bool = False):
    """Put the overlay and the emulator's torch_npu first on sys.path (idempotent). With
    ``runtime``, both come with the compiled runtime (``runtime_dir()``) when it can be built.
    Returns that runtime directory, or None."""
    built = runtime_dir() if runtime else None
    for path in reversed([built or SRC_DIR, OVERLAY_DIR]):
        if path not in sys.path:
            sys.path.insert(0, path)
    if built:
        _give_runtime(built)
    import apex

    where = list(getattr(apex, "__path__", []))
    if os.path.join(OVERLAY_DIR, "apex") not in where:
        raise RuntimeError(f"'apex' resolves to {where}, not to the overlay in {OVERLAY_DIR}")
    return built


def _give_runtime(built: str) -> None:
    """pytest may run several files in one process: a torch_npu that an earlier file imported
    from the source tree (without the runtime) finds the built ``torch_npu._apexnpu`` too, and
    forgets that it had none. Its Python modules are the same code as the built package's."""
    package = sys.modules.get("torch_npu")
    if package is None:
        return
    built_package = os.path.join(built, "torch_npu")
    if built_package not in package.__path__:
        package.__path__.append(built_package)
    runtime = sys.modules.get("torch_npu._runtime")
    if runtime is not None and runtime._module == [None]:
        runtime._module.clear()


def overlay_env(runtime=None) -> dict:
    """Environment for a child Python that imports the overlay and the emulator's torch_npu
    (with ``runtime``, a ``runtime_dir()``, the compiled one)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [OVERLAY_DIR, runtime or SRC_DIR, env.get("PYTHONPATH", "")]
    )
    if runtime is None:
        env.pop("APEXNPU_OPTIM_PATH", None)  # the child has no runtime on its path
    return env


_built_runtime: list = []  # [directory] once built in this process


def runtime_dir():
    """A directory holding ``apex/_apexnpu*.so`` and the emulator's ``torch_npu`` package with
    its ``_apexnpu`` module, built from this checkout, for sys.path.

    Built with ``$APEXNPU_BINARY build`` from a tree holding only the overlay (the binary
    compiles the runtime; upstream Apex is not needed). Returns None, with the reason in
    ``RUNTIME_SKIP_REASON``, when APEXNPU_BINARY is unset; a failing build raises.
    """
    if _built_runtime:
        return _built_runtime[0]
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
    shutil.copytree(
        os.path.join(OVERLAY_DIR, "apex"),
        os.path.join(tree, "apex"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    with open(os.path.join(tree, "apex", "__init__.py"), "w") as f:
        f.write('"""Package root stand-in: the tests build only the runtime."""\n')
    proc = subprocess.run(
        [
            binary,
            "-q",
            "build",
            "--python=" + sys.executable,
            "--tree",
            tree,
            "--allow-foreign-tree",
            "-o",
            os.path.join(work, "dist"),
            "-j2",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            "apexnpu build failed (%d):\n%s%s" % (proc.returncode, proc.stdout, proc.stderr)
        )
    built = glob.glob(os.path.join(work, "dist", "apex-*", "apex", "_apexnpu*.so"))
    emulator = glob.glob(os.path.join(work, "dist", "torch_npu_emulator-*", "torch_npu"))
    if len(built) != 1 or len(emulator) != 1:
        raise RuntimeError(
            "apexnpu build wrote %d apex/_apexnpu modules and %d torch_npu "
            "packages in %s" % (len(built), len(emulator), work)
        )
    target = os.path.join(work, "runtime")
    os.makedirs(os.path.join(target, "apex"))
    shutil.copy(built[0], os.path.join(target, "apex"))
    shutil.copytree(emulator[0], os.path.join(target, "torch_npu"))
    _built_runtime.append(target)
    return target


RUNTIME_SKIP_REASON = ""


def run_with_emulator(code: str) -> list:
    """Run ``code`` (dedented) in a fresh interpreter with the overlay and the emulator's
    torch_npu (src/) importable; returns its stdout split into words. A failure asserts."""
    import subprocess
    import textwrap

    env = overlay_env()
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
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
