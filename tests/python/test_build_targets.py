"""`apexnpu build` over a matrix: several Pythons in one call (the runtime and the stable-ABI
binding compiled once, each wheel naming the module with its own EXT_SUFFIX), `--python=all`, and `--target aarch64` cross-compiled with Debian's
cross compiler for the CPython whose multiarch headers are installed; the aarch64 wheel is
installed by pip into an arm64 venv and stepped under qemu-user, on an interpreter that says it
is aarch64, giving the same bits as the x86_64 wheel of the same call."""

import glob
import json
import os
import shutil
import subprocess
import textwrap

import pytest

import build_helpers as bh

EPOCH = "1700000000"


def installed_minors(candidates):
    return [m for m in candidates if bh.find_python(m) is not None]


def elf_machine(path):
    header = subprocess.run(
        ["readelf", "-h", path], stdout=subprocess.PIPE, check=True, universal_newlines=True
    ).stdout
    return [row.split(":", 1)[1].strip() for row in header.splitlines() if "Machine:" in row][0]


def test_several_pythons_in_one_call_share_one_runtime(tree, tmp_path):
    minors = installed_minors([8, 11, 13])
    if len(minors) < 2:
        pytest.skip("fewer than two of Python 3.8, 3.11, 3.13 are installed")
    cache = str(tmp_path / "objects")  # cold: every unit is compiled by this build
    request = ",".join("3.{}".format(m) for m in minors)
    proc, doc = bh.build_json(
        [
            "--python=" + request,
            "--tree",
            tree,
            "-o",
            str(tmp_path / "dist"),
            "--wheel",
            "--no-emulator",
            "--object-cache",
            cache,
            "-j2",
        ],
        env={"SOURCE_DATE_EPOCH": EPOCH},
    )
    assert proc.returncode == 0, proc.stderr
    wheels = doc["wheels"]
    assert [w["python"]["version"].rsplit(".", 1)[0] for w in wheels] == [
        "3.{}".format(m) for m in minors
    ]
    # The runtime once (a core batch and one kernel batch per ISA level) and the two binding
    # modules once: they are written for the stable ABI of CPython 3.7, linked once, and shared.
    levels = len(json.load(open(wheels[0]["manifest"]))["runtime"]["isa_levels"])
    assert doc["total"] == doc["compiled"] == 1 + levels + 2
    assert doc["linked"] == 2
    modules = []
    for w in wheels:
        suffix = w["python"]["ext_suffix"]
        files = bh.read_wheel(w["wheel"])
        modules.append((files["apex/_apexnpu" + suffix], files["change_data_ptr" + suffix]))
    assert all(m == modules[0] for m in modules), "one stable-ABI binary serves every Python"
    for w, m in zip(wheels, minors):
        assert w["architecture"] == bh.MACHINE
        assert w["tag"].startswith("cp3{0}-cp3{0}".format(m)) and w["tag"].endswith(bh.PLATFORM_TAG)
        assert w["platform_tags"] == bh.PLATFORM_TAG.split(".")
        assert os.path.basename(w["wheel"]) == "apex-0.1+ascend-{}.whl".format(w["tag"])
        assert w["sha256"] == bh.sha256_file(w["wheel"])
        assert w["manifest_sha256"] == bh.sha256_file(w["manifest"])
        files = bh.read_wheel(w["wheel"])
        assert (
            w["record_sha256"]
            == __import__("hashlib").sha256(files["apex-0.1+ascend.dist-info/RECORD"]).hexdigest()
        )
        with open(w["manifest"]) as f:
            manifest = json.load(f)
        assert manifest["python"]["version"] == w["python"]["version"]
        assert manifest["wheel"]["file"] == os.path.basename(w["wheel"])
        assert bh.run(["verify", w["wheel"]]).returncode == 0
    assert doc["wheel"] == wheels[0]["wheel"] and doc["tag"] == wheels[0]["tag"]
    # Each Python imports its wheel's module and steps an optimizer with it.
    for w in wheels:
        check = subprocess.run(
            [
                w["python"]["executable"],
                "-c",
                "import array; from apex import _apexnpu as rt; p = array.array('f', [1.0]); "
                "g = array.array('f', [0.5]); rt.Optimizer('sgd', {'lr': 0.5}).step("
                "p.buffer_info()[0], g.buffer_info()[0], 1); assert p[0] == 0.75, p[0]; print('ok')",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            universal_newlines=True,
            env=dict(bh.venv_env(), PYTHONPATH=w["layout"]),
        )
        assert check.stdout.strip() == "ok", (w["python"]["version"], check.stdout)


def test_all_builds_every_python_found(tree, tmp_path, tmp_path_factory):
    minors = installed_minors(range(7, 14))
    proc, doc = bh.build_json(
        [
            "--python=all",
            "--tree",
            tree,
            "-o",
            str(tmp_path / "dist"),
            "--no-emulator",
            "--object-cache",
            bh.shared_cache_dir(tmp_path_factory),
            "-j2",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    built = sorted(int(w["python"]["version"].split(".")[1]) for w in doc["wheels"])
    # A Python without headers is left out, and said so.
    assert set(built) <= set(minors) and built, (built, minors, proc.stderr)
    for m in set(minors) - set(built):
        assert "3.{} left out".format(m) in proc.stderr


def test_the_same_python_twice_is_a_usage_error(tree, tmp_path):
    proc = bh.run(["build", "--python=3.11,3.11", "--tree", tree, "-o", str(tmp_path / "out")])
    assert proc.returncode == 2, proc.stderr
    assert "two interpreters with the tag cp311-cp311" in proc.stderr
    assert not os.path.exists(str(tmp_path / "out"))
    proc = bh.run(["build", "--python=3.11,,3.12", "--tree", tree, "-o", str(tmp_path / "out")])
    assert proc.returncode == 2 and "an empty item" in proc.stderr


def test_an_unknown_target_names_the_known_ones(tree, tmp_path):
    proc = bh.run(
        [
            "build",
            "--target",
            "riscv64",
            "--python=3.11",
            "--tree",
            tree,
            "-o",
            str(tmp_path / "out"),
        ]
    )
    assert proc.returncode == 1
    assert "riscv64" in proc.stderr and "aarch64" in proc.stderr and "x86_64" in proc.stderr


def cross_ready():
    """None when the aarch64 cross build can run here, else why not."""
    if bh.MACHINE == "aarch64":
        return "this machine is aarch64: nothing to cross-compile"
    if shutil.which("aarch64-linux-gnu-g++") is None:
        return "no aarch64-linux-gnu-g++ (apt-get install g++-aarch64-linux-gnu)"
    if not os.path.exists("/usr/include/aarch64-linux-gnu/python3.11/pyconfig.h"):
        return "no CPython 3.11 headers for arm64 (apt-get install libpython3.11-dev:arm64)"
    return None


@pytest.fixture(scope="module")
def aarch64_build(tree, tmp_path_factory):
    why = cross_ready()
    if why:
        pytest.skip(why)
    out = str(tmp_path_factory.mktemp("aarch64"))
    # With the host's wheel beside it, from the same call, to compare their bits.
    proc, doc = bh.build_json(
        [
            "--target",
            "x86_64,aarch64",
            "--python=3.11",
            "--tree",
            tree,
            "-o",
            out,
            "--wheel",
            "--no-emulator",
            "--object-cache",
            bh.shared_cache_dir(tmp_path_factory),
            "-j2",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(w["architecture"] for w in doc["wheels"]) == ["aarch64", "x86_64"]
    return doc


def wheel_for(doc, architecture):
    (w,) = [w for w in doc["wheels"] if w["architecture"] == architecture]
    return w


def test_aarch64_wheel_is_cross_compiled_and_tagged_from_its_binaries(aarch64_build):
    w = wheel_for(aarch64_build, "aarch64")
    assert w["architecture"] == "aarch64"
    assert w["tag"] == "cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64"
    modules = glob.glob(os.path.join(w["layout"], "**", "*.so"), recursive=True)
    assert sorted(os.path.basename(m) for m in modules) == [
        "_apexnpu.cpython-311-aarch64-linux-gnu.so",
        "change_data_ptr.cpython-311-aarch64-linux-gnu.so",
    ]
    for module in modules:
        assert elf_machine(module) == "AArch64"
        needed, newest_glibc = bh.glibc_needs(module)
        assert "libstdc++.so.6" not in needed and newest_glibc <= (2, 18)
    with open(w["manifest"]) as f:
        manifest = json.load(f)
    assert manifest["runtime"]["architecture"] == "aarch64"
    assert manifest["compiler"]["command"] == "aarch64-linux-gnu-g++"
    assert manifest["python"]["platform_tag"] == "manylinux_2_17_aarch64.manylinux2014_aarch64"
    assert bh.run(["verify", w["wheel"]]).returncode == 0


def test_a_foreign_target_needs_named_pythons(tree, tmp_path):
    if bh.MACHINE == "aarch64":
        pytest.skip("this machine is aarch64")
    proc = bh.run(["build", "--target", "aarch64", "--tree", tree, "-o", str(tmp_path / "out")])
    assert proc.returncode == 2
    assert "--target aarch64 needs --python=3.N" in proc.stderr


ARM_STEP = bh.STEP_SCRIPT_HELPERS + textwrap.dedent(r"""
    import array, platform, sys
    assert platform.machine() == "aarch64", platform.machine()  # never the x86 build by mistake
    from apex import _apexnpu as rt
    import change_data_ptr
    assert rt.isa_levels()[0] == "scalar" and rt.active_isa() in rt.isa_levels()

    p0 = [1.0, -2.0, 3.5, 0.25, -0.75, 10.0, 0.0]
    g0 = [0.5, -1.0, 0.25, 2.0, 0.0, -3.0, 1.5]
    n = len(p0)
    # One step of every optimizer against its formula or, for the per-tensor ones, finiteness
    # and the direction of the step.
    p = array.array("f", p0); g = array.array("f", g0); buf = array.array("f", [0.0] * n)
    rt.Optimizer("sgd", {"lr": 0.1, "momentum": 0.9}).step(addr(p), addr(g), n,
                                                           {"momentum_buffer": addr(buf)})
    assert all(close(p[i], p0[i] - 0.1 * g0[i], 1e-5) for i in range(n)), list(p)
    for kind in rt.OPTIMIZERS:
        p = array.array("f", p0); g = array.array("f", g0)
        names = rt.OPTIMIZER_KINDS[kind]["state"]
        state = {name: array.array("f", [1.0 if kind == "rmsprop_tf" else 0.0] * n) for name in names}
        options = {"lr": 0.01}
        segments = [(0, n)] if rt.OPTIMIZER_KINDS[kind]["inputs"] != "options" else None
        opt = rt.Optimizer(kind, options, segments=segments)
        opt.step(addr(p), addr(g), n, {k: addr(v) for k, v in state.items()})
        assert opt.step_count == 1, kind
        for i in range(n):
            assert p[i] == p[i] and abs(p[i]) < 1e30, (kind, list(p))
            if g0[i] != 0 and kind != "adamp":
                assert (p[i] - p0[i]) * g0[i] < 0, (kind, i, p[i], p0[i])  # against the gradient
        if kind == "adam":  # bias-corrected first step: lr * g / (|g| + eps)
            assert all(close(p[i], p0[i] - 0.01 * g0[i] / (abs(g0[i]) + 1e-8), 1e-5) for i in range(n))
    # fp16 with the NPU's saturation.
    rt.clear_float_status()
    src = array.array("f", [1.0, 70000.0, -1e9]); dst = array.array("H", [0, 0, 0])
    assert rt.float_to_half(addr(src), addr(dst), 3) is True
    assert list(dst) == [0x3C00, 0x7BFF, 0xFBFF]
    print("ARM-OK", platform.machine(), sys.version_info[:2])
""")


# Three steps of every optimizer over 37 elements (SIMD bodies and a tail), printed as the bits
# of the parameters and the state: the same on either architecture at every ISA level.
BITS_STEP = bh.STEP_SCRIPT_HELPERS + textwrap.dedent(r"""
    import array, platform
    from apex import _apexnpu as rt
    print("isa", platform.machine(), rt.active_isa())
    n = 37
    for kind in rt.OPTIMIZERS:
        names = rt.OPTIMIZER_KINDS[kind]["state"]
        state = {name: array.array("f", [1.0 if kind == "rmsprop_tf" else 0.0] * n) for name in names}
        options = {"lr": 0.01, "weight_decay": 0.01}
        if kind == "sgd":
            options["momentum"] = 0.9
        takes_segments = rt.OPTIMIZER_KINDS[kind]["inputs"] != "options"
        segments = [(0, 20), (20, n - 20)] if takes_segments else None
        opt = rt.Optimizer(kind, options, segments=segments)
        p = array.array("f", series(7, 3.0, n))
        for step in range(3):
            g = array.array("f", series(11 + step, 0.5, n))
            opt.step(addr(p), addr(g), n, {k: addr(v) for k, v in state.items()})
        print(kind, p.tobytes().hex(), *(state[k].tobytes().hex() for k in names))
""")


def arm64_python(root):
    """Debian's CPython 3.11 for arm64, unpacked under root (its interpreter package cannot be
    installed beside the host's); its standard library is libpython3.11-stdlib:arm64's."""
    if shutil.which("qemu-aarch64") is None:
        pytest.skip("no qemu-aarch64 (apt-get install qemu-user)")
    if not glob.glob("/usr/lib/python3.11/lib-dynload/*aarch64-linux-gnu.so"):
        pytest.skip("no arm64 standard library (apt-get install libpython3.11-stdlib:arm64)")
    got = subprocess.run(
        ["apt-get", "download", "python3.11-minimal:arm64"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
    )
    debs = glob.glob(os.path.join(root, "python3.11-minimal_*_arm64.deb"))
    if got.returncode != 0 or not debs:
        pytest.skip("cannot download python3.11-minimal:arm64: " + got.stdout.strip()[-300:])
    subprocess.run(["dpkg-deb", "-x", debs[0], os.path.join(root, "arm64")], check=True)
    return os.path.join(root, "arm64", "usr", "bin", "python3.11")


def test_aarch64_wheel_installs_and_steps_under_qemu(aarch64_build, tmp_path):
    w = wheel_for(aarch64_build, "aarch64")
    interpreter = arm64_python(str(tmp_path))
    env = dict(bh.venv_env(), QEMU_LD_PREFIX="/")
    qemu = ["qemu-aarch64"]
    venv = str(tmp_path / "venv")
    subprocess.run(
        qemu + [interpreter, "-m", "venv", "--without-pip", venv], check=True, env=env, timeout=600
    )
    vpy = os.path.join(venv, "bin", "python")
    assert elf_machine(os.path.realpath(vpy)) == "AArch64"
    # pip is pure Python: Debian's own, run by the arm64 interpreter, installs into its venv.
    pip_env = dict(env, PYTHONPATH="/usr/lib/python3/dist-packages")
    inst = subprocess.run(
        qemu + [vpy, "-m", "pip", "install", "--no-index", "--no-deps", w["wheel"]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=pip_env,
        universal_newlines=True,
        timeout=900,
    )
    assert inst.returncode == 0, inst.stdout
    step = subprocess.run(
        qemu + [vpy, "-c", ARM_STEP],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        universal_newlines=True,
        cwd=str(tmp_path),
        timeout=900,
    )
    assert step.returncode == 0, step.stderr
    assert "ARM-OK aarch64 (3, 11)" in step.stdout
    site = subprocess.run(
        qemu + [vpy, "-c", "import apex, sys; print(apex.__file__)"],
        stdout=subprocess.PIPE,
        env=env,
        universal_newlines=True,
        timeout=600,
    )
    assert site.stdout.strip().startswith(venv), site.stdout

    # The same steps give the same bits on aarch64 (neon and scalar) as the host's wheel of the
    # same call gives on x86_64 (its best level and scalar).
    host = wheel_for(aarch64_build, "x86_64")
    host_python = bh.find_python(11)
    if host_python is None:
        pytest.skip("no CPython 3.11 on this host to run the x86_64 wheel")
    runs = {}
    for isa in ("", "scalar"):
        arm = subprocess.run(
            qemu + [vpy, "-c", BITS_STEP],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env, APEXNPU_ISA=isa),
            universal_newlines=True,
            cwd=str(tmp_path),
            timeout=900,
        )
        assert arm.returncode == 0, arm.stderr
        x86 = subprocess.run(
            [host_python, "-c", BITS_STEP],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
            cwd=str(tmp_path),
            env=dict(bh.venv_env(), APEXNPU_ISA=isa, PYTHONPATH=host["layout"]),
            timeout=600,
        )
        assert x86.returncode == 0, x86.stderr
        runs["aarch64", isa], runs["x86_64", isa] = arm.stdout.splitlines(), x86.stdout.splitlines()
    assert runs["aarch64", ""][0] == "isa aarch64 neon"
    assert runs["aarch64", "scalar"][0] == "isa aarch64 scalar"
    assert runs["x86_64", ""][0].startswith("isa x86_64 ")
    assert runs["x86_64", "scalar"][0] == "isa x86_64 scalar"
    reference = runs["x86_64", "scalar"][1:]
    assert [line.split()[0] for line in reference][:3] == ["sgd", "adam", "adamw"], reference
    for key, lines in runs.items():
        assert len(lines) == len(reference) + 1, key
        for want, got in zip(reference, lines[1:]):
            assert got == want, (key, want.split()[0])
