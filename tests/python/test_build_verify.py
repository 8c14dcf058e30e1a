"""`apexnpu verify` on wheels and layouts: a good build passes; each kind of damage is caught
(exit 1, named); several at once are all listed. Damaged copies are made with Python's zipfile."""

import base64
import hashlib
import os
import zipfile

import pytest

import build_helpers as bh

DI = "apex-0.1+ascend.dist-info"


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    tree = bh.write_fixture_tree(str(tmp_path_factory.mktemp("fixture")))
    out = str(tmp_path_factory.mktemp("dist"))
    proc, doc = bh.build_json(
        [
            "--python=3.11",
            "--tree",
            tree,
            "-o",
            out,
            "--wheel",
            "--object-cache",
            bh.shared_cache_dir(tmp_path_factory),
            "-j2",
        ]
    )
    if proc.returncode != 0 and "no Python 3.11" in proc.stderr:
        pytest.skip("Python 3.11 is not installed")
    assert proc.returncode == 0, proc.stderr
    return doc, bh.read_layout(doc["layout"])


def record_rows(files):
    return [line.split(",") for line in files[DI + "/RECORD"].decode().splitlines()]


def set_record(files, rows):
    files[DI + "/RECORD"] = ("\n".join(",".join(r) for r in rows) + "\n").encode()


def rerecord(files, di=DI):
    rows = []
    for path in sorted(files):
        if path == di + "/RECORD":
            continue
        data = files[path]
        rows.append(
            [
                path,
                "sha256="
                + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(),
                str(len(data)),
            ]
        )
    rows.append([di + "/RECORD", "", ""])
    files[di + "/RECORD"] = ("\n".join(",".join(r) for r in rows) + "\n").encode()


def wrong_hash(f):
    f["apex/sub/data.json"] = b'{"answer": 43}\n'


def wrong_size(f):
    rows = record_rows(f)
    for r in rows:
        if r[0] == "apex/__init__.py":
            r[2] = str(int(r[2]) + 1)
    set_record(f, rows)


def not_in_record(f):
    f["apex/extra.py"] = b"x = 1\n"


def missing_file(f):
    del f["apex/sub/data.json"]


def md5_hash(f):
    rows = record_rows(f)
    for r in rows:
        if r[0] == "apex/__init__.py":
            r[1] = "md5=" + hashlib.md5(f["apex/__init__.py"]).hexdigest()
    set_record(f, rows)


def padded(f):
    rows = record_rows(f)
    for r in rows:
        if r[0] == "apex/__init__.py":
            r[1] += "="
    set_record(f, rows)


def no_wheel(f):
    del f[DI + "/WHEEL"]
    rerecord(f)


def no_metadata(f):
    del f[DI + "/METADATA"]
    rerecord(f)


def dist_info_renamed(f):
    for p in [p for p in f if p.startswith(DI + "/")]:
        f[p.replace(DI, "apex-0.2+ascend.dist-info")] = f.pop(p)
    rerecord(f, "apex-0.2+ascend.dist-info")


def suffix_mismatch(f):
    so = [p for p in f if p.startswith("apex/_apexnpu.")][0]
    f["apex/_apexnpu.cpython-310-x86_64-linux-gnu.so"] = f.pop(so)
    rerecord(f)


CASES = {
    "wrong_hash": (wrong_hash, "hash mismatch"),
    "wrong_size": (wrong_size, "size mismatch"),
    "not_in_record": (not_in_record, "apex/extra.py: file not listed in RECORD"),
    "record_row_for_missing_file": (
        missing_file,
        "apex/sub/data.json): file listed in RECORD is missing",
    ),
    "md5": (md5_hash, "md5 hash"),
    "padded_base64": (padded, "padding"),
    "missing_WHEEL": (no_wheel, DI + "/WHEEL: missing"),
    "missing_METADATA": (no_metadata, DI + "/METADATA: missing"),
    "dist_info_name": (dist_info_renamed, "does not match METADATA"),
    "extension_suffix": (
        suffix_mismatch,
        "extension suffix '.cpython-310-x86_64-linux-gnu.so' does not match",
    ),
}


def write_wheel(files, path):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(files):
            z.writestr(name, files[name])
    return path


def test_good_build_verifies(good, tmp_path):
    doc, files = good
    for path in (doc["layout"], doc["wheel"]):
        proc = bh.run(["verify", path])
        assert proc.returncode == 0, proc.stderr
    # A rewrite by Python's zipfile of the same files is still a valid wheel.
    again = write_wheel(files, str(tmp_path / os.path.basename(doc["wheel"])))
    assert bh.run(["verify", again]).returncode == 0


@pytest.mark.parametrize("case", sorted(CASES))
def test_violation_is_caught(case, good, tmp_path):
    doc, files = good
    damage, needle = CASES[case]
    files = dict(files)
    damage(files)
    layout = bh.write_files(files, str(tmp_path / "layout"))
    wheel = write_wheel(files, str(tmp_path / os.path.basename(doc["wheel"])))
    for path in (layout, wheel):
        proc = bh.run(["verify", path])
        assert proc.returncode == 1, (path, proc.stderr)
        assert needle in proc.stderr, "{!r} not in:\n{}".format(needle, proc.stderr)


def test_wheel_file_name_must_match(good, tmp_path):
    doc, files = good
    renamed = write_wheel(files, str(tmp_path / "apex-0.2+ascend-cp311-cp311-linux_x86_64.whl"))
    proc = bh.run(["verify", renamed])
    assert proc.returncode == 1 and "does not match the file name" in proc.stderr, proc.stderr
    other_tag = write_wheel(files, str(tmp_path / "apex-0.1+ascend-cp310-cp310-linux_x86_64.whl"))
    proc = bh.run(["verify", other_tag])
    assert proc.returncode == 1 and "is not among WHEEL's tags" in proc.stderr, proc.stderr


def test_a_platform_tag_the_binaries_do_not_keep_is_refused(good, tmp_path):
    """As auditwheel would: the modules need glibc 2.14 (memcpy), so a claim of
    manylinux_2_5 is refused naming the version and the symbol; an x86_64 module under an
    aarch64 tag too."""
    doc, files = good
    for claim, needles in (
        (
            "manylinux_2_5_x86_64",
            ["tag manylinux_2_5_x86_64", "GLIBC_2.14", "newer than manylinux_2_5's GLIBC_2.5"],
        ),
        ("linux_aarch64", ["binary in a wheel tagged linux_aarch64"]),
    ):
        if bh.MACHINE != "x86_64":
            pytest.skip("the claims are written for an x86_64 build")
        claimed = dict(files)
        wheel_meta = claimed[DI + "/WHEEL"].decode()
        lines = [row for row in wheel_meta.splitlines() if not row.startswith("Tag: ")]
        claimed[DI + "/WHEEL"] = ("\n".join(lines + ["Tag: cp311-cp311-" + claim]) + "\n").encode()
        rerecord(claimed)
        wheel = write_wheel(
            claimed, str(tmp_path / "apex-0.1+ascend-cp311-cp311-{}.whl".format(claim))
        )
        proc = bh.run(["verify", wheel])
        assert proc.returncode == 1, proc.stderr
        for needle in needles:
            assert needle in proc.stderr, "{!r} not in:\n{}".format(needle, proc.stderr)


def test_every_violation_is_listed(good, tmp_path):
    doc, files = good
    files = dict(files)
    wrong_hash(files)
    not_in_record(files)
    proc = bh.run(["--json", "verify", bh.write_files(files, str(tmp_path / "layout"))])
    assert proc.returncode == 1
    assert "2 violations" in proc.stderr
    assert "hash mismatch" in proc.stderr and "file not listed in RECORD" in proc.stderr


def test_not_a_wheel(tmp_path):
    junk = tmp_path / "junk.whl"
    junk.write_bytes(b"not a zip at all")
    proc = bh.run(["verify", str(junk)])
    assert proc.returncode == 1 and "not a valid zip archive" in proc.stderr
    proc = bh.run(["verify", str(tmp_path / "missing.whl")])
    assert proc.returncode == 1 and "no such wheel or layout directory" in proc.stderr
