"""`apexnpu verify` on hostile wheels (issue 44). The wheels zip readers disagree on (a duplicate
entry, a local header naming another path, a symlink, names colliding by case, names that are
not UTF-8 or absurdly long) are refused with a message naming the wheel and the entry; every
wheel of the set that verify accepts, pip installs. Zip bombs (entries sharing compressed data,
an honest 4 GiB entry in a 4 MB file, a layout holding a 5 GB sparse file) are refused, and a
legitimate wheel that inflates to 500 MiB is streamed, all with the peak memory of the verify
process (its ru_maxrss, measured by a child process that runs it) under a stated bound."""

import base64
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib

import pytest

import build_helpers as bh

NAME, VERSION = "hostile", "1.0"
DI = "{}-{}.dist-info".format(NAME, VERSION)
WHEEL_NAME = "{}-{}-py3-none-any.whl".format(NAME, VERSION)
# The peak resident memory `apexnpu verify` may reach on any case here. The wheels declare up to
# 4 GiB and the layout 5 GB; the binary itself with its policies takes about 10 MiB.
MAX_RSS_MIB = 64

METADATA = "Metadata-Version: 2.1\nName: {}\nVersion: {}\n".format(NAME, VERSION).encode()
WHEEL = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def b64(digest):
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def record_for(files):
    """RECORD text for [(name, bytes)]: one row per entry, RECORD's own last."""
    rows = []
    for name, data in files:
        field = name if "," not in name and '"' not in name else '"' + name.replace('"', '""') + '"'
        rows.append("{},sha256={},{}".format(field, b64(hashlib.sha256(data).digest()), len(data)))
    rows.append(DI + "/RECORD,,")
    return ("\n".join(rows) + "\n").encode("utf-8", "surrogateescape")


def package_files(*extra):
    """The wheel's files as [(name, bytes)] with its dist-info, `extra` (name, bytes) added."""
    files = [("hostile/__init__.py", b"VALUE = 1\n")] + list(extra)
    files += [(DI + "/METADATA", METADATA), (DI + "/WHEEL", WHEEL)]
    return files + [(DI + "/RECORD", record_for(files))]


def honest_wheel(files, directories=(), stream=False):
    """A wheel as Python's zipfile writes it (data descriptors when `stream`)."""
    out = io.BytesIO()

    class Unseekable:  # zipfile writes data descriptors to a stream it cannot seek
        def write(self, b):
            return out.write(b)

        def flush(self):
            pass

    with zipfile.ZipFile(Unseekable() if stream else out, "w", zipfile.ZIP_DEFLATED) as z:
        for d in directories:
            z.writestr(d, b"")
        for name, data in files:
            if stream:
                with z.open(name, "w") as f:
                    f.write(data)
            else:
                z.writestr(name, data)
    return out.getvalue()


def raw_zip(entries):
    """A zip laid out by hand: each entry is a dict with name (bytes), data, and optionally
    local_name, mode, flags, a deflated `body` with its declared `size`, and `header_of` (no
    header of its own: that entry's)."""
    out, central, offsets = bytearray(), bytearray(), []
    for e in entries:
        name = e["name"]
        data = e.get("data", b"")
        body = e.get("body", data)
        method = 8 if "body" in e else 0
        size = e.get("size", len(data))
        flags = e.get("flags", 0x800 if any(c >= 0x80 for c in name) else 0)
        crc = e.get("crc", zlib.crc32(data))
        fields = struct.pack("<HHHHHIII", 20, flags, method, 0, 0x21, crc, len(body), size)
        if "header_of" in e:
            offsets.append(offsets[e["header_of"]])
        else:
            offsets.append(len(out))
            local = e.get("local_name", name)
            out += b"PK\x03\x04" + fields + struct.pack("<HH", len(local), 0) + local + body
        central += (
            b"PK\x01\x02"
            + struct.pack("<H", (3 << 8) | 20)
            + fields
            + struct.pack(
                "<HHHHHII", len(name), 0, 0, 0, 0, e.get("mode", 0o100644) << 16, offsets[-1]
            )
            + name
        )
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(out), 0
    )
    return bytes(out + central + end)


def raw_wheel(extra_entries, record_extra=()):
    """A hand-made wheel: the package's files plus `extra_entries` (raw_zip dicts); RECORD
    lists the files and `record_extra` [(name, bytes)]."""
    base = package_files(*record_extra)
    listed_only = {n for n, _ in record_extra}  # their entries are among extra_entries
    entries = [
        {"name": n.encode("utf-8", "surrogateescape"), "data": d}
        for n, d in base[:-1]
        if n not in listed_only
    ]
    entries += extra_entries
    record = base[-1]
    entries.append({"name": record[0].encode(), "data": record[1]})
    return raw_zip(entries)


def named(name):
    """A file name as RECORD and raw_zip take it: str, with undecodable bytes escaped."""
    return name.decode("utf-8", "surrogateescape")


LONG = b"hostile/" + b"n" * 60000 + b".py"
NOT_UTF8 = b"hostile/caf\xe9.py"

# (case, wheel bytes, what verify says; None: accepted).
CASES = [
    ("good", lambda: honest_wheel(package_files()), None),
    (
        "good-utf8-name",
        lambda: honest_wheel(package_files(("hostile/caf\u00e9.py", b"X = 2\n"))),
        None,
    ),
    (
        "good-directories",
        lambda: honest_wheel(package_files(), directories=["hostile/", DI + "/"]),
        None,
    ),
    ("good-data-descriptors", lambda: honest_wheel(package_files(), stream=True), None),
    (
        "duplicate",
        lambda: raw_wheel([{"name": b"hostile/__init__.py", "data": b"VALUE = 1\n"}]),
        "entry hostile/__init__.py: the name appears twice",
    ),
    (
        "local-name-differs",
        lambda: raw_wheel(
            [{"name": b"hostile/x.py", "local_name": b"../../x.py", "data": b"x\n"}],
            [("hostile/x.py", b"x\n")],
        ),
        "entry hostile/x.py: the local header names it differently ('../../x.py')",
    ),
    (
        "symlink",
        lambda: raw_wheel(
            [{"name": b"hostile/link.py", "data": b"__init__.py", "mode": 0o120777}],
            [("hostile/link.py", b"__init__.py")],
        ),
        "entry hostile/link.py: a symlink",
    ),
    (
        "case-collision",
        lambda: raw_wheel(
            [{"name": b"hostile/A.py", "data": b"a\n"}, {"name": b"hostile/a.py", "data": b"b\n"}],
            [("hostile/A.py", b"a\n"), ("hostile/a.py", b"b\n")],
        ),
        "entry hostile/a.py: the name differs from hostile/A.py only by case",
    ),
    (
        "long-name",
        lambda: raw_wheel([{"name": LONG, "data": b""}], [(named(LONG), b"")]),
        "is 60011 bytes long (at most 1024 allowed)",
    ),
    (
        "not-utf8",
        lambda: raw_wheel([{"name": NOT_UTF8, "data": b""}], [(named(NOT_UTF8), b"")]),
        "entry hostile/caf\\xe9.py: the name is not valid UTF-8",
    ),
    (
        "newline-in-name",
        lambda: raw_wheel([{"name": b"hostile/a\nb.py", "data": b""}], [("hostile/a\nb.py", b"")]),
        "holds a control character",
    ),
    (
        "cp437-name",
        lambda: raw_wheel(
            [{"name": "hostile/caf\u00e9.py".encode(), "data": b"", "flags": 0}],
            [("hostile/caf\u00e9.py", b"")],
        ),
        "a non-ASCII name without the UTF-8 flag",
    ),
]


def run_verify(path):
    return bh.run(["verify", path])


@pytest.fixture(scope="module")
def hostile_set(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    out = {}
    for case, make, expected in CASES:
        folder = root / case
        folder.mkdir()
        path = folder / WHEEL_NAME
        path.write_bytes(make())
        out[case] = (str(path), expected)
    return out


def test_verify_refuses_what_readers_disagree_on_naming_wheel_and_entry(hostile_set):
    for case, (path, expected) in hostile_set.items():
        proc = run_verify(path)
        if expected is None:
            assert proc.returncode == 0, (case, proc.stderr)
            continue
        assert proc.returncode != 0, case
        assert path + ": " in proc.stderr, (case, proc.stderr)
        assert expected in proc.stderr, (case, proc.stderr)
        assert len(proc.stderr) < 2000, (case, "a long name is cut short in the message")


def test_every_wheel_verify_accepts_pip_installs(hostile_set, tmp_path):
    accepted = [
        (case, path)
        for case, (path, _) in sorted(hostile_set.items())
        if run_verify(path).returncode == 0
    ]
    assert {c for c, _ in accepted} == {c for c, _, e in CASES if e is None}
    venv = str(tmp_path / "venv")
    subprocess.run([bh.SYSTEM_PYTHON, "-m", "venv", venv], check=True, env=bh.venv_env())
    vpy = os.path.join(venv, "bin", "python")
    for case, path in accepted:
        proc = bh.pip(vpy, "install", "--no-index", "--no-deps", "--force-reinstall", path)
        assert proc.returncode == 0, (case, proc.stdout)
        check = subprocess.run(
            [vpy, "-c", "import hostile; print(hostile.VALUE)"],
            stdout=subprocess.PIPE,
            env=bh.venv_env(),
            cwd=str(tmp_path),
            universal_newlines=True,
        )
        assert check.stdout.strip() == "1", (case, check)


# Runs the command given and prints its exit code, stderr and peak RSS (ru_maxrss of the only
# child it waited for: the command), so earlier children of the test do not count.
MEASURE = r"""
import json, resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
print(json.dumps({"rc": p.returncode, "stderr": p.stderr.decode("utf-8", "replace"),
                  "maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def verify_measured(path):
    env = dict(
        os.environ, APEXNPU_DATA_DIR=os.environ.get("APEXNPU_DATA_DIR", bh.REPO), NO_COLOR="1"
    )
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, bh.binary(), "verify", str(path)],
        stdout=subprocess.PIPE,
        env=env,
        check=True,
        universal_newlines=True,
    )
    result = json.loads(proc.stdout)
    assert result["maxrss_kib"] < MAX_RSS_MIB * 1024, result
    print("verify {}: peak RSS {} KiB".format(path, result["maxrss_kib"]))
    return result


def shared_body_bomb():
    """2000 entries on one deflated 100 MiB body, told apart only in the central directory
    (about 300 KB): a reader that follows the central directory inflates 200 GiB. The second
    entry already shows it: its local header names the first."""
    body = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(100 << 20)
    deflated = body.compress(zeros) + body.flush()
    crc = zlib.crc32(zeros)
    entries = [
        {
            "name": "hostile/b{}.py".format(i).encode(),
            "body": deflated,
            "size": len(zeros),
            "crc": crc,
        }
        for i in range(2000)
    ]
    for e in entries[1:]:
        e["header_of"] = 0
    return raw_zip(entries)


def honest_4gib_entry():
    """One entry that really inflates to 4095 MiB of zeros, in about 4 MB: deflate's 16 MiB
    pieces after a full flush are identical, so the stream is one piece repeated."""
    piece_size, pieces = 16 << 20, 255
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(piece_size)
    piece = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    assert again == piece
    last = bytes(15 << 20)
    tail = c.compress(last) + c.flush()
    crc = 0
    for _ in range(pieces):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(last, crc)
    body = piece * pieces + tail
    size = pieces * piece_size + len(last)
    return raw_zip([{"name": b"hostile/big.bin", "body": body, "size": size, "crc": crc}])


def test_bombs_are_refused_in_bounded_memory(tmp_path):
    shared = tmp_path / "shared" / WHEEL_NAME
    shared.parent.mkdir()
    shared.write_bytes(shared_body_bomb())
    assert shared.stat().st_size < 400 << 10
    result = verify_measured(shared)
    assert result["rc"] != 0
    assert (
        "{}: entry hostile/b1.py: the local header names it differently".format(shared)
        in result["stderr"]
    ), result

    big = tmp_path / "big" / WHEEL_NAME
    big.parent.mkdir()
    big.write_bytes(honest_4gib_entry())
    assert big.stat().st_size < 5 << 20
    result = verify_measured(big)
    assert result["rc"] != 0
    assert (
        "{}: entry hostile/big.bin: the entries up to this one inflate to 4293918720 bytes, "
        "more than the 2147483648 allowed".format(big)
        in result["stderr"]
    ), result

    layout = tmp_path / "layout"
    for name, data in package_files():
        (layout / name).parent.mkdir(parents=True, exist_ok=True)
        (layout / name).write_bytes(data)
    with open(str(layout / "hostile" / "sparse.bin"), "wb") as f:
        f.truncate(5 * 10**9)  # holes: no disk space, no time
    result = verify_measured(layout)
    assert result["rc"] != 0
    assert "{}: hostile/sparse.bin: 5000000000 bytes".format(layout) in result["stderr"], result


def test_a_wheel_inflating_to_500_mib_is_streamed_in_bounded_memory(tmp_path):
    """Five honest 100 MiB entries: verify inflates and hashes all of them, and accepts the
    wheel, without holding any of them."""
    zeros = bytes(100 << 20)
    extra = [("hostile/data{}.bin".format(i), zeros) for i in range(5)]
    path = tmp_path / WHEEL_NAME
    path.write_bytes(honest_wheel(package_files(*extra)))
    result = verify_measured(path)
    assert result["rc"] == 0, result


@pytest.mark.parametrize(
    "name, message",
    [
        (b"apex/caf\xe9.py", "apex/caf\\xe9.py: the name is not valid UTF-8"),
        (b"apex/Sub.py", "apex/sub.py: the name differs from apex/Sub.py only by case"),
    ],
)
def test_build_refuses_a_tree_name_pip_could_not_install(name, message, tmp_path):
    tree = bh.write_fixture_tree(str(tmp_path / "tree"))
    with open(os.path.join(tree.encode(), name), "wb") as f:
        f.write(b"X = 1\n")
    if name == b"apex/Sub.py":
        with open(os.path.join(tree, "apex", "sub.py"), "wb") as f:
            f.write(b"X = 2\n")
    out = str(tmp_path / "dist")
    proc = bh.run(
        [
            "build",
            "--tree",
            tree,
            "-o",
            out,
            "--wheel",
            "--python",
            "{}.{}".format(*sys.version_info[:2]),
        ]
    )
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr
    assert not os.path.exists(out) or not os.listdir(out), "nothing written"
