"""`apexnpu build` end to end: for every CPython 3.7-3.13 on this machine, build from a fixture
tree, install the .whl into a fresh venv with pip (no index), import apex and the binding, run
optimizer steps on Python-owned buffers and check them against formulas, uninstall cleanly.
Plus: RECORD read independently, reproducibility, incremental rebuilds, the wheel's contents."""

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

import build_helpers as bh

MINORS = [7, 8, 9, 10, 11, 12, 13]
EPOCH = "1700000000"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return bh.shared_cache_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def built(tree, cache, tmp_path_factory):
    """One build per Python minor, on demand: {minor: (doc, out_dir)}."""
    results = {}

    def get(minor):
        if minor not in results:
            if bh.find_python(minor) is None:
                pytest.skip(
                    "Python 3.{} is not installed (not on PATH, not under pyenv)".format(minor)
                )
            out = str(tmp_path_factory.mktemp("dist-3{}".format(minor)))
            proc, doc = bh.build_json(
                [
                    "--python=3.{}".format(minor),
                    "--tree",
                    tree,
                    "-o",
                    out,
                    "--wheel",
                    "--object-cache",
                    cache,
                    "-j2",
                ],
                env={"SOURCE_DATE_EPOCH": EPOCH},
            )
            if proc.returncode != 0 and "Python.h not found" in proc.stderr:
                pytest.skip(
                    "Python 3.{} has no headers here: {}".format(minor, proc.stderr.strip())
                )
            assert proc.returncode == 0, proc.stderr
            results[minor] = (doc, out)
        return results[minor]

    return get


KINDS = bh.registry_kinds()
STEP_SCRIPT = (
    bh.STEP_SCRIPT_HELPERS
    + "KINDS = %r\n" % KINDS
    + textwrap.dedent(r"""
    import array, math, os, sys
    import apex, apex.sub
    from apex import _apexnpu as rt
    import change_data_ptr
    assert apex.sub.DATA == {"answer": 42}
    assert callable(change_data_ptr.change_data_ptr)
    assert rt.runtime_version() == rt.RUNTIME_VERSION
    assert "scalar" in rt.isa_levels() and rt.active_isa() in rt.supported_isa_levels()

    # SGD with momentum and weight decay, two steps (torch.optim.SGD's rule).
    p0 = [1.0, -2.0, 3.5, 0.25, -0.75, 10.0, 0.0]
    g1 = [0.5, -1.0, 0.25, 2.0, 0.0, -3.0, 1.5]
    g2 = [0.1, 0.2, -0.3, -0.4, 0.5, 0.6, -0.7]
    n = len(p0)
    p = array.array("f", p0); g = array.array("f", g1); buf = array.array("f", [0.0] * n)
    opt = rt.Optimizer("sgd", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01})
    opt.step(addr(p), addr(g), n, {"momentum_buffer": addr(buf)})
    g[:] = array.array("f", g2)
    opt.step(addr(p), addr(g), n, {"momentum_buffer": addr(buf)})
    assert opt.step_count == 2
    for i in range(n):
        b1 = g1[i] + 0.01 * p0[i]
        q1 = p0[i] - 0.1 * b1
        b2 = 0.9 * b1 + (g2[i] + 0.01 * q1)
        q2 = q1 - 0.1 * b2
        assert close(p[i], q2, 1e-5), (i, p[i], q2)
        assert close(buf[i], b2, 1e-5), (i, buf[i], b2)

    # Adam, one step: bias correction makes the update lr * g / (|g| + eps).
    p = array.array("f", p0); g = array.array("f", g1)
    m = array.array("f", [0.0] * n); v = array.array("f", [0.0] * n)
    adam = rt.Optimizer("adam", {"lr": 0.01})
    adam.step(addr(p), addr(g), n, {"exp_avg": addr(m), "exp_avg_sq": addr(v)})
    for i in range(n):
        want = p0[i] - 0.01 * g1[i] / (abs(g1[i]) + 1e-8)
        assert close(p[i], want, 1e-5), (i, p[i], want)

    # Bad options and state buffers are clear errors naming what is wrong.
    def raises(exc, text, fn, *args):
        try:
            fn(*args)
        except exc as e:
            assert text in str(e), (text, str(e))
        else:
            raise AssertionError("{} not raised for {!r}".format(exc.__name__, args))

    raises(TypeError, "options must be a dict with str keys", rt.Optimizer, "sgd", [("lr", 0.1)])
    raises(TypeError, "options must be a dict with str keys", rt.Optimizer, "sgd", {1: 0.1})
    raises(TypeError, "sgd has no option 'betas'", rt.Optimizer, "sgd", {"lr": 0.1, "betas": 0.9})
    raises(ValueError, "sgd has no state buffer 'exp_avg'", opt.step, addr(p), addr(g), n,
           {"exp_avg": addr(buf)})
    raises(TypeError, "state (name -> address) must be a dict", opt.step, addr(p), addr(g), n,
           [addr(buf)])
    assert opt.step_count == 2  # refused steps do not count
    assert list(rt.OPTIMIZERS) == [kind for kind, _ in KINDS]  # the registry's, in its order
    assert rt.OPTIMIZER_CLASSES == dict(KINDS)
    assert isinstance(rt.LossScaler(dynamic=False, init_scale=8.0), rt.LossScaler)

    # fp16 conversion saturates at 65504 and raises the float status.
    rt.clear_float_status()
    src = array.array("f", [1.0, 70000.0, -1e9]); dst = array.array("H", [0, 0, 0])
    assert rt.float_to_half(addr(src), addr(dst), 3) is True
    assert list(dst) == [0x3C00, 0x7BFF, 0xFBFF]
    assert rt.get_float_status() is True and rt.clear_float_status() is True
    assert rt.get_float_status() is False
    print("STEP-OK", sys.version_info[:2])
""")
)


def venv_env():
    env = dict(os.environ)
    env.update(
        {
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_INPUT": "1",
            "PYTHONNOUSERSITE": "1",
        }
    )
    env.pop("PYTHONPATH", None)
    return env


def site_listing(venv):
    return set(bh.listing(venv))


@pytest.mark.parametrize("minor", MINORS)
def test_build_install_import_step_uninstall(minor, built, tmp_path):
    doc, out = built(minor)
    assert doc["tag"].startswith("cp3{}-cp3{}".format(minor, minor))
    assert doc["tag"].endswith("-" + bh.PLATFORM_TAG)
    if minor == 7:
        assert doc["tag"] == "cp37-cp37m-" + bh.PLATFORM_TAG  # abi from SOABI, with its 'm'
    wheel = doc["wheel"]
    assert os.path.basename(wheel) == "apex-0.1+ascend-{}.whl".format(doc["tag"])

    python = doc["python"]["executable"]
    venv = str(tmp_path / "venv")
    subprocess.run([python, "-m", "venv", venv], check=True, env=venv_env())
    vpy = os.path.join(venv, "bin", "python")
    before = site_listing(venv)
    # --no-deps: the fresh venv has no torch (METADATA's Requires-Dist: torch).
    inst = subprocess.run(
        [vpy, "-m", "pip", "install", "--no-index", "--no-deps", wheel],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=venv_env(),
        universal_newlines=True,
    )
    assert inst.returncode == 0, inst.stdout  # includes Python 3.7's old pip and a +local version
    show = subprocess.run(
        [vpy, "-m", "pip", "show", "apex"],
        stdout=subprocess.PIPE,
        env=venv_env(),
        universal_newlines=True,
    )
    assert "Version: 0.1+ascend" in show.stdout
    step = subprocess.run(
        [vpy, "-c", STEP_SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=venv_env(),
        universal_newlines=True,
        cwd=str(tmp_path),
    )
    assert step.returncode == 0, step.stderr
    assert "STEP-OK" in step.stdout
    un = subprocess.run(
        [vpy, "-m", "pip", "uninstall", "-y", "apex"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=venv_env(),
        universal_newlines=True,
    )
    assert un.returncode == 0, un.stdout
    # Nothing of the wheel is left, not even byte code the imports wrote (pip removes the
    # __pycache__ of every .py in RECORD) or empty package folders.
    left = site_listing(venv) - before
    assert not [p for p in left if "apex" in p or "change_data_ptr" in p], sorted(left)


def test_python_3_6_is_refused(tmp_path, tree):
    if bh.find_python(6) is None:
        pytest.skip("Python 3.6 is not installed")
    proc = bh.run(["build", "--python=3.6", "--tree", tree, "-o", str(tmp_path / "out")])
    assert proc.returncode == 1
    assert "Python 3.6 is not supported" in proc.stderr
    assert not os.path.exists(str(tmp_path / "out"))


def test_record_contents_and_zip_layout(built):
    doc, out = built(11)
    wheel_files = bh.read_wheel(doc["wheel"])
    layout_files = bh.read_layout(doc["layout"])
    assert wheel_files == layout_files
    di = bh.check_record(wheel_files)
    assert di == "apex-0.1+ascend.dist-info"
    suffix = doc["python"]["ext_suffix"]
    package = {p for p in wheel_files if not p.startswith(di + "/")}
    assert package == bh.EXPECTED_PACKAGE_FILES | {
        "apex/_apexnpu" + suffix,
        "change_data_ptr" + suffix,
    }
    assert wheel_files[di + "/top_level.txt"].decode().split() == ["apex", "change_data_ptr"]
    meta = wheel_files[di + "/METADATA"].decode()
    for line in (
        "Metadata-Version: 2.1",
        "Name: apex",
        "Version: 0.1+ascend",
        "Requires-Python: >=3.7",
        "Requires-Dist: torch",
        "License: ",
    ):
        assert line in meta, line
    wheel_meta = wheel_files[di + "/WHEEL"].decode()
    assert "Wheel-Version: 1.0" in wheel_meta and "Root-Is-Purelib: false" in wheel_meta
    for platform_tag in bh.PLATFORM_TAG.split("."):  # one Tag line per tag of the set
        assert "Tag: cp311-cp311-{}\n".format(platform_tag) in wheel_meta

    with zipfile.ZipFile(doc["wheel"]) as z:
        infos = z.infolist()
    names = [i.filename for i in infos]
    body = [n for n in names if not n.startswith(di + "/")]
    assert body == sorted(body)
    assert names[len(body) :][-1] == di + "/RECORD"  # dist-info last, RECORD at the very end
    assert all(n.startswith(di + "/") for n in names[len(body) :])
    for i in infos:
        mode = i.external_attr >> 16
        assert mode == (0o100755 if i.filename.endswith(".so") else 0o100644), i.filename
        assert i.date_time == (2023, 11, 14, 22, 13, 20)  # SOURCE_DATE_EPOCH=1700000000 (UTC)
        assert i.compress_type == zipfile.ZIP_DEFLATED
    assert (
        subprocess.run(
            [sys.executable, "-m", "zipfile", "-t", doc["wheel"]], stdout=subprocess.PIPE
        ).returncode
        == 0
    )


def test_manifest_beside_layout_and_in_dist_info(built):
    doc, out = built(11)
    with open(doc["manifest"]) as f:
        manifest = json.load(f)
    inside = json.loads(
        bh.read_layout(doc["layout"])["apex-0.1+ascend.dist-info/apexnpu_manifest.json"]
    )
    assert manifest == inside
    assert manifest["schema_version"] == 3
    emulator = manifest["emulator"]
    assert emulator["name"] == "torch_npu_emulator"
    assert emulator["file"] == "torch_npu_emulator-0.1+ascend-cp37-abi3-{}.whl".format(
        bh.PLATFORM_TAG
    )
    assert len(emulator["source_digest"]) == 64
    assert manifest["python"]["abi_tag"] == "cp311"
    assert manifest["python"]["platform_tag"] == bh.PLATFORM_TAG
    assert manifest["runtime"]["architecture"] == bh.MACHINE
    assert manifest["wheel"] == {
        "name": "apex",
        "version": "0.1+ascend",
        "file": "apex-0.1+ascend-cp311-cp311-{}.whl".format(bh.PLATFORM_TAG),
    }
    assert manifest["build_time"] == {"unix_time": int(EPOCH), "from_source_date_epoch": True}
    assert "-fstack-protector-strong" in manifest["compiler"]["compile_flags"]
    assert "-Wl,-z,relro,-z,now" in manifest["compiler"]["link_flags"]
    assert manifest["runtime"]["isa_levels"] == ["scalar", "avx2", "avx512"]
    assert manifest["runtime"]["optimizers"] == sorted(kind for kind, _ in KINDS)
    assert manifest["source"]["tree"] == "--allow-foreign-tree"  # the fixture is no gen output
    assert manifest["source"]["patch_sha256"] is None
    assert len(manifest["compatibility"]["rows"]) == 16
    assert manifest["tested_with"][0]["torch"] == "1.13.1"
    assert bh.REPO not in json.dumps(manifest)  # no machine paths


def test_the_modules_keep_the_manylinux_2_17_promise(built):
    """What the tag claims, checked with binutils: only libraries the policy allows, and no
    glibc symbol version newer than 2.17 (2.18 is aarch64's baseline set)."""
    doc, _ = built(11)
    allowed = {
        "libc.so.6",
        "libm.so.6",
        "libpthread.so.0",
        "libgcc_s.so.1",
        "libdl.so.2",
        "librt.so.1",
        "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1",
    }
    modules = [
        os.path.join(root, name)
        for root, _, names in os.walk(doc["layout"])
        for name in names
        if name.endswith(".so")
    ]
    assert len(modules) == 2
    for module in modules:
        needed, newest_glibc = bh.glibc_needs(module)
        assert needed <= allowed, (module, needed - allowed)  # libstdc++ is linked in
        assert newest_glibc <= (2, 18 if bh.MACHINE == "aarch64" else 17), (module, newest_glibc)


def test_reproducible_and_incremental(built, tree, cache, tmp_path):
    built(11)  # warms the cache
    wheels = []
    # Two builds back to back (so nothing in the source tree changes between them).
    for name in ("first", "second"):
        proc, doc = bh.build_json(
            [
                "--python=3.11",
                "--tree",
                tree,
                "-o",
                str(tmp_path / name),
                "--wheel",
                "--object-cache",
                cache,
            ],
            env={"SOURCE_DATE_EPOCH": EPOCH},
        )
        assert proc.returncode == 0, proc.stderr
        wheels.append(doc["wheel"])
    assert doc["compiled"] == 0 and doc["linked"] == 0  # nothing changed: nothing compiled
    assert doc["cached"] == doc["total"] > 0
    assert bh.sha256_file(wheels[0]) == bh.sha256_file(wheels[1])
    emulators = [
        os.path.join(str(tmp_path / n), os.path.basename(doc["emulator"]["wheel"]))
        for n in ("first", "second")
    ]
    assert bh.sha256_file(emulators[0]) == bh.sha256_file(emulators[1])
    # The epoch is what makes it reproducible: another epoch, other timestamps, other bytes.
    proc, later = bh.build_json(
        [
            "--python=3.11",
            "--tree",
            tree,
            "-o",
            str(tmp_path / "later"),
            "--wheel",
            "--object-cache",
            cache,
        ],
        env={"SOURCE_DATE_EPOCH": str(int(EPOCH) + 86400)},
    )
    assert proc.returncode == 0, proc.stderr
    assert bh.sha256_file(later["wheel"]) != bh.sha256_file(wheels[1])


def test_rebuild_into_existing_output_replaces_items(built, tree, cache, tmp_path):
    out = str(tmp_path / "dist")
    os.makedirs(out)
    with open(os.path.join(out, "keep.txt"), "w") as f:
        f.write("mine")
    for label in ("ascend", "ascend"):
        proc, doc = bh.build_json(
            [
                "--python=3.11",
                "--tree",
                tree,
                "-o",
                out,
                "--wheel",
                "--object-cache",
                cache,
                "--version-label",
                label,
            ]
        )
        assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == sorted(
        [
            "keep.txt",
            "apex-0.1+ascend-cp311-cp311-" + bh.PLATFORM_TAG,
            "apex-0.1+ascend-cp311-cp311-{}.whl".format(bh.PLATFORM_TAG),
            "apex-0.1+ascend-cp311-cp311-{}.manifest.json".format(bh.PLATFORM_TAG),
            "torch_npu_emulator-0.1+ascend-cp37-abi3-" + bh.PLATFORM_TAG,
            "torch_npu_emulator-0.1+ascend-cp37-abi3-{}.whl".format(bh.PLATFORM_TAG),
        ]
    )
    assert bh.run(["verify", doc["wheel"]]).returncode == 0


def test_version_label(built, tree, cache, tmp_path):
    out = str(tmp_path / "dist")
    proc, doc = bh.build_json(
        [
            "--python=3.11",
            "--tree",
            tree,
            "-o",
            out,
            "--wheel",
            "--object-cache",
            cache,
            "--version-label",
            "Ascend.RC1",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    assert os.path.basename(doc["wheel"]) == "apex-0.1+ascend.rc1-cp311-cp311-{}.whl".format(
        bh.PLATFORM_TAG
    )
    assert bh.check_record(bh.read_wheel(doc["wheel"])) == "apex-0.1+ascend.rc1.dist-info"
    emulator = bh.read_wheel(doc["emulator"]["wheel"])
    assert bh.check_record(emulator) == "torch_npu_emulator-0.1+ascend.rc1.dist-info"
    metadata = emulator["torch_npu_emulator-0.1+ascend.rc1.dist-info/METADATA"].decode()
    assert "Version: 0.1+ascend.rc1\n" in metadata
    assert "Requires-Dist: apex" not in metadata  # the emulator stands alone
    proc = bh.run(
        [
            "build",
            "--python=3.11",
            "--tree",
            tree,
            "-o",
            str(tmp_path / "bad"),
            "--version-label",
            "ascend-1",
        ]
    )
    assert proc.returncode == 2
    assert "--version-label=ascend-1" in proc.stderr and "'-'" in proc.stderr
    assert not os.path.exists(str(tmp_path / "bad"))


def test_extension_modules_are_hardened_stripped_and_export_only_their_init(built):
    doc, _ = built(11)
    tools = [
        t
        for t in ("readelf", "nm")
        if subprocess.run(["which", t], stdout=subprocess.PIPE).returncode == 0
    ]
    if len(tools) < 2:
        pytest.skip("needs readelf and nm (binutils)")
    layout = doc["layout"]
    suffix = doc["python"]["ext_suffix"]
    for rel, init in (
        ("apex/_apexnpu" + suffix, "PyInit__apexnpu"),
        ("change_data_ptr" + suffix, "PyInit_change_data_ptr"),
    ):
        so = os.path.join(layout, rel)
        dyn = subprocess.run(
            ["readelf", "-dW", so], stdout=subprocess.PIPE, universal_newlines=True
        ).stdout
        assert "BIND_NOW" in dyn  # -z now
        seg = subprocess.run(
            ["readelf", "-lW", so], stdout=subprocess.PIPE, universal_newlines=True
        ).stdout
        assert "GNU_RELRO" in seg  # -z relro
        stack = [row for row in seg.splitlines() if "GNU_STACK" in row][0]
        assert "RWE" not in stack  # -z noexecstack
        sections = subprocess.run(
            ["readelf", "-SW", so], stdout=subprocess.PIPE, universal_newlines=True
        ).stdout
        assert ".symtab" not in sections and ".debug_info" not in sections  # -s
        exported = subprocess.run(
            ["nm", "-D", "--defined-only", so], stdout=subprocess.PIPE, universal_newlines=True
        ).stdout.split("\n")
        names = [row.split()[-1] for row in exported if row.strip()]
        assert init in names
        # -fvisibility=hidden: nothing of the runtime or the binding is exported (only the
        # init function, plus libstdc++'s vague-linkage template instances).
        assert not [
            n for n in names if n.startswith("_ZN7apexnpu") or n.startswith("_ZNK7apexnpu")
        ], names
