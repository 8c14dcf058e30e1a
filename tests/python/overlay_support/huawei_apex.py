"""Huawei's Ascend apex, assembled and built as its scripts/build.sh does, for
test_huawei_apex_on_emulator.py.

build.sh clones NVIDIA Apex, checks out the commit it pins, applies patch/npu.patch (``patch -p1``),
copies ``src/*`` over the tree and ``tests/*`` into its tests/, then runs ``setup.py --cpp_ext
bdist_wheel``. Here the same with git and Python: ``git clone`` + ``checkout`` of the pin read from
build.sh, ``git apply`` of the patch, the two folders extracted from ``git archive``. The wheel is
built by ``setup_cpp_ext.py`` (beside this file): Ascend's packages and its two C++ extensions
(``change_data_ptr``, ``apex_C``) compiled by torch's ``cpp_extension`` against the torch of the
interpreter that runs it (Ascend's setup.py looks for torch's headers under
``{sys.prefix}/lib/pythonX.Y/site-packages``, which neither Debian's torch nor a venv has).
"""

import io
import os
import re
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
SETUP = os.path.join(HERE, "setup_cpp_ext.py")
PIN = re.compile(r"^\s*git checkout ([0-9a-f]{40})\s*$", re.M)


def _git(*args, cwd=None, data=None):
    proc = subprocess.run(["git"] + list(args), cwd=cwd, input=data, capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError("git {} failed: {}".format(" ".join(args[:3]), proc.stderr.decode()))
    return proc.stdout


def show(ascend, branch, path):
    """A file of Ascend's repository (a git directory) at ``branch``, as bytes."""
    return _git("--git-dir", ascend, "show", f"{branch}:{path}")


def pinned_commit(ascend, branch):
    """The NVIDIA Apex commit Ascend's scripts/build.sh checks out."""
    found = PIN.findall(show(ascend, branch, "scripts/build.sh").decode())
    if len(found) != 1:
        raise RuntimeError(f"scripts/build.sh of {branch} pins {len(found)} commits: {found}")
    return found[0]


def assemble(ascend, upstream, branch, dest):
    """Ascend's apex tree at ``dest``: NVIDIA Apex at the pin, Ascend's patch, src/ and tests/."""
    commit = pinned_commit(ascend, branch)
    _git("clone", "--quiet", "--no-checkout", upstream, dest)
    _git("-c", "advice.detachedHead=false", "checkout", "--quiet", commit, cwd=dest)
    _git(
        "apply", "--whitespace=nowarn", "-", cwd=dest, data=show(ascend, branch, "patch/npu.patch")
    )
    archive = _git("--git-dir", ascend, "archive", "--format=tar", branch, "src", "tests")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            top, _, rest = member.name.partition("/")
            target = os.path.join(dest, rest) if top == "src" else os.path.join(dest, "tests", rest)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with tar.extractfile(member) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
    return commit


def build_wheel(python, tree, out, log):
    """Ascend's apex wheel, its extensions compiled for ``python``'s torch; its path. The build's
    output goes to ``log``."""
    env = dict(os.environ, MAX_JOBS="2")
    env.pop("PYTHONPATH", None)
    with open(log, "w") as f:
        proc = subprocess.run(
            [python, SETUP, "bdist_wheel", "-d", out],
            cwd=tree,
            env=env,
            stdout=f,
            stderr=subprocess.STDOUT,
        )
    if proc.returncode != 0:
        with open(log) as f:
            raise RuntimeError("building Ascend's apex failed:\n" + f.read()[-6000:])
    wheels = [w for w in os.listdir(out) if w.startswith("apex-") and w.endswith(".whl")]
    assert len(wheels) == 1, wheels
    return os.path.join(out, wheels[0])


def missing_headers(python):
    """What the C++ extensions need from ``python``'s torch that is not installed, as a sentence
    naming the fix; None when all is there."""
    code = (
        "import os, sysconfig\n"
        "from torch.utils.cpp_extension import include_paths\n"
        "paths = include_paths() + [sysconfig.get_paths()['include'], '/usr/include']\n"
        "for h in ('torch/extension.h', 'pybind11/pybind11.h', 'Python.h'):\n"
        "    print(h, any(os.path.exists(os.path.join(p, h)) for p in paths))\n"
    )
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        return "torch.utils.cpp_extension is unavailable: " + proc.stderr[-500:]
    missing = [line.split()[0] for line in proc.stdout.splitlines() if line.endswith("False")]
    if not missing:
        return None
    return (
        f"{', '.join(missing)} not found for {sys.executable}'s torch: its C++ headers are "
        "needed to build Ascend's change_data_ptr extension (Debian's python3-torch: "
        "apt-get install libtorch-dev pybind11-dev; Python headers: python3-dev)"
    )


def venv_with_huawei_apex(tmp_path_factory, ascend, upstream, branch="master"):
    """(a venv's python holding Huawei's apex built from ``ascend`` at ``branch`` and the
    emulator's wheel, nothing else of ours; the assembled tree). Skips the calling test when
    APEXNPU_BINARY or torch's C++ headers are missing."""
    import pytest

    import build_helpers as bh

    if not os.environ.get("APEXNPU_BINARY"):
        pytest.skip("APEXNPU_BINARY is not set (the apexnpu binary to build the emulator's wheel)")
    missing = missing_headers(sys.executable)
    if missing:
        pytest.skip(missing)
    work = tmp_path_factory.mktemp("huawei")
    tree = str(work / "ascend-apex")
    assemble(ascend, upstream, branch, tree)
    wheel = build_wheel(sys.executable, tree, str(work / "dist"), str(work / "build.log"))
    # The emulator's wheel; apexnpu builds our apex's beside it, which stays out.
    fixture = bh.write_files({"apex/__init__.py": ""}, str(work / "fixture"))
    ours = str(work / "ours")
    bh.build_for_system_python(fixture, ours, bh.shared_cache_dir(tmp_path_factory), "--wheel")
    (emulator,) = [
        os.path.join(ours, w)
        for w in os.listdir(ours)
        if w.startswith("torch_npu_emulator-") and w.endswith(".whl")
    ]
    python = bh.make_torch_venv(str(work / "venv"))
    inst = bh.pip(python, "install", "--no-index", "--no-deps", emulator, wheel)
    assert inst.returncode == 0, inst.stdout
    return python, tree
