"""Helpers for the `apexnpu build` tests (test_build_*.py): the binary, a fixture Apex tree,
interpreter discovery, an independent RECORD reader (hashlib/base64/csv only)."""

import base64
import csv
import glob
import hashlib
import io
import json
import os
import platform
import re
import shutil
import subprocess
import zipfile

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch
MACHINE = platform.machine()
# The platform tag apexnpu build gives this machine's wheels: the manylinux_2_17 floor it links
# for (static libstdc++, glibc references pinned to the baseline), with the legacy alias.
PLATFORM_TAG = "manylinux_2_17_{0}.manylinux2014_{0}".format(MACHINE)
REPO = os.environ.get(
    "APEXNPU_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
)


def registry_rows(data_dir=None):
    """The runtime's optimizer registry, [(C++ class, kind, Python class), ...] in its order: the
    rows of src/runtime/optim/registry.h in the data dir `apexnpu build` compiles
    (APEXNPU_DATA_DIR, else this checkout), the one list the binding's OPTIMIZERS,
    OPTIMIZER_CLASSES and the manifest's list derive from."""
    data_dir = data_dir or os.environ.get("APEXNPU_DATA_DIR") or REPO
    with open(os.path.join(data_dir, "src", "runtime", "optim", "registry.h")) as f:
        rows = re.findall(r'OptimizerKind<(\w+)>\{"(\w+)", "(\w+)"', f.read())
    assert rows, "no OptimizerKind rows in registry.h"
    return rows


def registry_kinds(data_dir=None):
    """[(kind, Python class), ...] of registry_rows."""
    return [(kind, cls) for _, kind, cls in registry_rows(data_dir)]


def binary():
    path = os.environ.get("APEXNPU_BINARY") or os.path.join(
        REPO, "build", "release", "src", "cli", "apexnpu"
    )
    if not os.path.exists(path):
        raise RuntimeError("apexnpu binary not found; set APEXNPU_BINARY")
    return path


def shared_cache_dir(tmp_factory):
    """One object cache for every build test (the runtime compiles once); under the CMake build
    dir when ctest runs us, so reruns are warm."""
    build_dir = os.environ.get("APEXNPU_BUILD_DIR")
    if build_dir:
        path = os.path.join(build_dir, "test-object-cache")
        os.makedirs(path, exist_ok=True)
        return path
    return str(tmp_factory.mktemp("object-cache"))


def run(args, env=None, check=False, cwd=None):
    args = list(args)
    # The fixture trees are not gen's output: build them as foreign trees (the manifest says so).
    if "build" in args and "--tree" in args and "--allow-foreign-tree" not in args:
        args.insert(args.index("build") + 1, "--allow-foreign-tree")
    full_env = dict(os.environ)
    full_env.setdefault("APEXNPU_DATA_DIR", REPO)
    full_env["NO_COLOR"] = "1"
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [binary()] + list(args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=full_env,
        cwd=cwd,
        universal_newlines=True,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            "apexnpu {} failed ({}):\n{}\n{}".format(
                " ".join(args), proc.returncode, proc.stdout, proc.stderr
            )
        )
    return proc


def build_json(args, env=None):
    proc = run(["--json", "build"] + list(args), env=env)
    doc = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc, doc


def build_for_system_python(tree, out, cache, *extra, env=None):
    """`apexnpu --json build` of `tree` for Debian's Python into `out`; its --json document.
    Fails the test when the build fails."""
    proc, doc = build_json(
        ["--python=" + SYSTEM_PYTHON, "--tree", tree, "-o", out, "--object-cache", cache, "-j2"]
        + list(extra),
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return doc


def write_fixture_tree(root):
    """A minimal Apex tree: the apex package (a submodule, package data) plus the things that must
    stay out of the wheel (tests/, csrc/, __pycache__, build leftovers)."""
    files = {
        "apex/__init__.py": "from . import sub\n__version__ = '0.1'\n",
        "apex/sub/__init__.py": "import json, os\nDATA = json.load(open(os.path.join(os.path.dirname(__file__), 'data.json')))\n",
        "apex/sub/data.json": '{"answer": 42}\n',
        "apex/__pycache__/__init__.cpython-311.pyc": "junk",
        "apex/sub/kernel.cpp": "int x;\n",
        "apex/contrib/csrc/fused.cu": "// cuda\n",
        "apex/contrib/__init__.py": "",
        "apex/contrib/test/test_x.py": "assert False\n",
        "apex/old.py.orig": "old\n",
        "tests/test_apex.py": "assert False\n",
        "csrc/amp_C.cpp": "int y;\n",
        "setup.py": "raise SystemExit('setup.py must not run')\n",
        "build/lib/apex/__init__.py": "stale\n",
    }
    return write_files(files, root)


def write_files(files, root):
    """Writes {relative path: str or bytes} under root, making folders; returns root."""
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
    return root


EXPECTED_PACKAGE_FILES = {
    "apex/__init__.py",
    "apex/sub/__init__.py",
    "apex/sub/data.json",
    "apex/contrib/__init__.py",
}


def find_python(minor):
    """python3.N on PATH (pyenv shims skipped), else ~/.pyenv/versions/3.N.*; None if absent."""
    name = "python3.{}".format(minor)
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if os.path.basename(os.path.normpath(d)) == "shims":
            continue
        cand = os.path.join(d, name)
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    cands = glob.glob(os.path.join(root, "versions", "3.{}.*".format(minor), "bin", name))
    cands = [
        c
        for c in cands
        if os.path.basename(os.path.dirname(os.path.dirname(c))).split(".")[1] == str(minor)
    ]
    if not cands:
        return None
    return max(
        cands,
        key=lambda c: [
            int(x)
            for x in os.path.basename(os.path.dirname(os.path.dirname(c))).split(".")
            if x.isdigit()
        ],
    )


def b64_sha256(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def check_record(files):
    """files: {path: bytes} of a wheel. Reads RECORD with csv and checks every row, independently
    of apexnpu's own verifier. Returns the dist-info name."""
    dist_infos = {p.split("/")[0] for p in files if p.split("/")[0].endswith(".dist-info")}
    assert len(dist_infos) == 1, dist_infos
    di = dist_infos.pop()
    record_path = di + "/RECORD"
    rows = list(csv.reader(io.StringIO(files[record_path].decode("utf-8"))))
    listed = set()
    for row in rows:
        assert len(row) == 3, row
        path, digest, size = row
        listed.add(path)
        if path == record_path:
            assert digest == "" and size == "", row
            continue
        assert path in files, "RECORD names a missing file: " + path
        algo, _, value = digest.partition("=")
        assert algo == "sha256", row
        assert "=" not in value and "+" not in value and "/" not in value, row
        assert value == b64_sha256(files[path]), "hash mismatch for " + path
        assert int(size) == len(files[path]), "size mismatch for " + path
    assert listed == set(files), "files not in RECORD: {}".format(set(files) - listed)
    return di


def read_layout(layout):
    out = {}
    for dirpath, _, names in os.walk(layout):
        for n in names:
            full = os.path.join(dirpath, n)
            rel = os.path.relpath(full, layout).replace(os.sep, "/")
            with open(full, "rb") as f:
                out[rel] = f.read()
    return out


def read_wheel(path):
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i.filename) for i in z.infolist()}


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def listing(root):
    if not os.path.exists(root):
        return None
    out = []
    for dirpath, dirs, names in os.walk(root):
        for n in dirs + names:
            out.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(out)


def venv_env():
    """The environment for pip and Python in a test venv: no user config, no index prompts."""
    env = dict(
        os.environ,
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        PYTHONNOUSERSITE="1",
    )
    env.pop("PYTHONPATH", None)
    return env


def make_venv(path):
    """A venv of Debian's Python that sees its torch; returns the venv's python."""
    subprocess.run(
        [SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", path], check=True, env=venv_env()
    )
    return os.path.join(path, "bin", "python")


def make_torch_venv(path):
    """A venv that sees the torch of the Python running the test: Debian's (a venv of it with
    its site packages), or the torch 2.x venv's (through a .pth file naming its site packages);
    returns the venv's python."""
    import site
    import sys

    if sys.prefix == sys.base_prefix:
        return make_venv(path)
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", path], check=True, env=venv_env())
    vpy = os.path.join(path, "bin", "python")
    inner = subprocess.run(
        [vpy, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        stdout=subprocess.PIPE,
        check=True,
        universal_newlines=True,
    )
    with open(os.path.join(inner.stdout.strip(), "torch_venv.pth"), "w") as f:
        f.write("\n".join(site.getsitepackages()) + "\n")
    return vpy


def pip(vpy, *args):
    return subprocess.run(
        [vpy, "-m", "pip"] + list(args),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=venv_env(),
        universal_newlines=True,
    )


# The helpers the step scripts (run in the Pythons a wheel was built for) share: an array's
# address, closeness relative to the expected value, and a series of inputs that every Python on
# every architecture computes with the same bits (a linear congruential generator).
STEP_SCRIPT_HELPERS = """
def addr(a):
    return a.buffer_info()[0]

def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(b))

def series(seed, scale, n):
    x, out = seed, []
    for _ in range(n):
        x = (x * 1103515245 + 12345) % 2**31
        out.append(scale * (x / 2**30 - 1.0))
    return out
"""


def glibc_needs(module):
    """What a shared object asks of the loader, read with binutils' readelf (independent of
    apexnpu's ELF reader): (DT_NEEDED names, the highest GLIBC_ version required as a tuple)."""
    dynamic = subprocess.run(
        ["readelf", "-d", module], stdout=subprocess.PIPE, check=True, universal_newlines=True
    ).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    versions = subprocess.run(
        ["readelf", "-V", module], stdout=subprocess.PIPE, check=True, universal_newlines=True
    ).stdout
    glibc = [
        tuple(int(x) for x in v.split(".")) for v in re.findall(r"Name: GLIBC_([0-9.]+)", versions)
    ]
    return needed, max(glibc)


def copytree(src, dst):
    shutil.copytree(src, dst, symlinks=True)
    return dst
