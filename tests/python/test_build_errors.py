"""`apexnpu build` on bad input: each a clear error, exit 1 (2 for bad usage), and nothing left
in -o (nor staging folders beside it)."""

import os
import stat
import textwrap

import pytest

import build_helpers as bh


def script(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + textwrap.dedent(body))
    os.chmod(path, 0o755)
    return path


def expect_failure(args, tmp_path, needles, code=1, env=None, out_name="out"):
    out = os.path.join(str(tmp_path), out_name)
    before = bh.listing(str(tmp_path))
    proc = bh.run(["build"] + list(args) + ["-o", out], env=env)
    assert proc.returncode == code, proc.stderr
    for n in needles:
        assert n in proc.stderr, "{!r} not in:\n{}".format(n, proc.stderr)
    assert not os.path.exists(out), "partial output left in -o"
    assert bh.listing(str(tmp_path)) == before, "something was left beside -o"
    return proc


def test_unknown_python_version(tree, tmp_path):
    expect_failure(
        ["--python=3.99", "--tree", tree],
        tmp_path,
        ["no Python 3.99 found", "python3.99 on PATH", "versions/3.99*"],
    )


def test_malformed_python_version_is_usage_error(tree, tmp_path):
    expect_failure(["--python=four", "--tree", tree], tmp_path, ["--python=four"], code=2)


def test_path_that_is_not_python(tree, tmp_path):
    fake = script(str(tmp_path / "notpython"), "echo hello\n")
    expect_failure(
        ["--python=" + fake, "--tree", tree], tmp_path, [fake, "is not a Python interpreter"]
    )
    data = tmp_path / "data.txt"
    data.write_text("not a program")
    expect_failure(["--python=" + str(data), "--tree", tree], tmp_path, [str(data)])
    expect_failure(
        ["--python=/nonexistent/python3", "--tree", tree], tmp_path, ["no such executable"]
    )


def test_python_2_is_refused(tree, tmp_path):
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates = [
        os.path.join(root, "versions", v, "bin", "python2.7")
        for v in (
            os.listdir(os.path.join(root, "versions"))
            if os.path.isdir(os.path.join(root, "versions"))
            else []
        )
        if v.startswith("2.7")
    ]
    candidates += ["/usr/bin/python2.7"]
    py2 = next((c for c in candidates if os.path.exists(c)), None)
    if py2 is None:
        pytest.skip("no Python 2.7 on this machine")
    expect_failure(["--python=" + py2, "--tree", tree], tmp_path, ["Python 2.7 is not supported"])


def test_missing_headers_name_the_dev_package(tree, tmp_path):
    fake = script(
        str(tmp_path / "python3.9"),
        """\
        cat <<'JSON'
        {"version": "3.9.2", "major": 3, "minor": 9, "implementation": "cpython",
         "soabi": "cpython-39-x86_64-linux-gnu", "ext_suffix": ".cpython-39-x86_64-linux-gnu.so",
         "include": "/nonexistent/include/python3.9", "includepy": "/nonexistent/include/python3.9",
         "platform": "linux-x86_64", "pointer_bits": 64}
        JSON
        """,
    )
    expect_failure(
        ["--python=" + fake, "--tree", tree],
        tmp_path,
        ["Python.h not found", "/nonexistent/include/python3.9", "python3.9-dev"],
    )


def test_tree_without_apex(tmp_path):
    empty = tmp_path / "tree"
    (empty / "tests").mkdir(parents=True)
    expect_failure(
        ["--python=3.11", "--tree", str(empty)], tmp_path, ["no apex/ package", str(empty)]
    )
    expect_failure(
        ["--python=3.11", "--tree", str(tmp_path / "missing")], tmp_path, ["not a directory"]
    )


def test_without_tree_gen_runs_first_and_its_errors_leave_nothing(tmp_path):
    # gen reads the upstream first; a missing local upstream fails before anything is written.
    expect_failure(
        ["--python=3.11", "--upstream", str(tmp_path / "no-such-repo"), "--offline"],
        tmp_path,
        ["no-such-repo"],
    )


def test_unwritable_output_directory(tree, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = bh.run(["build", "--python=3.11", "--tree", tree, "-o", str(blocker / "dist")])
    assert proc.returncode == 1 and "cannot write the output directory" in proc.stderr, proc.stderr
    assert blocker.read_text() == "not a directory"
    proc = bh.run(["build", "--python=3.11", "--tree", tree, "-o", str(blocker)])
    assert proc.returncode == 1 and "not a directory" in proc.stderr, proc.stderr
    proc = bh.run(["build", "--python=3.11", "--tree", tree, "-o", "/proc/apexnpu-test/dist"])
    assert proc.returncode == 1 and "cannot write the output directory" in proc.stderr, proc.stderr
    if os.geteuid() != 0:  # root ignores permission bits
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            proc = bh.run(["build", "--python=3.11", "--tree", tree, "-o", str(ro / "dist")])
            assert proc.returncode == 1 and "cannot write" in proc.stderr, proc.stderr
            assert os.listdir(str(ro)) == []
        finally:
            ro.chmod(0o755)


def test_failing_compiler_shows_its_message_and_command(tree, tmp_path):
    fake_cxx = script(
        str(tmp_path / "fakecxx"),
        """\
        for a in "$@"; do [ "$a" = --version ] && { echo "fakecxx 1.0"; exit 0; }; done
        echo "fakecxx: error: the compiler is broken on purpose" >&2
        exit 1
        """,
    )
    out = tmp_path / "out"
    out.mkdir()
    (out / "previous.txt").write_text("from an earlier build")
    before = bh.listing(str(tmp_path))
    proc = bh.run(
        [
            "build",
            "--python=3.11",
            "--tree",
            tree,
            "-o",
            str(out),
            "--wheel",
            "--object-cache",
            str(tmp_path / "cache"),
            "-j2",
        ],
        env={"CXX": fake_cxx},
    )
    assert proc.returncode == 1, proc.stderr
    assert "the compiler is broken on purpose" in proc.stderr
    assert "command: " + fake_cxx + " -std=c++20" in proc.stderr
    assert "failed" in proc.stderr
    # -o is exactly as it was; no staging folder is left beside it.
    assert bh.listing(str(out)) == ["previous.txt"]
    after = [p for p in bh.listing(str(tmp_path)) if not p.startswith("cache")]
    assert after == [p for p in before if not p.startswith("cache")]


def test_compiler_that_cannot_run(tree, tmp_path):
    expect_failure(
        ["--python=3.11", "--tree", tree],
        tmp_path,
        ["cannot run the C++ compiler", "CXX"],
        env={"CXX": "/nonexistent/c++"},
    )


def test_bad_source_date_epoch(tree, tmp_path):
    expect_failure(
        ["--python=3.11", "--tree", tree],
        tmp_path,
        ["SOURCE_DATE_EPOCH=yesterday"],
        code=2,
        env={"SOURCE_DATE_EPOCH": "yesterday"},
    )


def test_staging_left_by_a_killed_build_is_cleaned_up(tree, tmp_path):
    # A build killed with SIGKILL leaves its staging folder; the next build removes it.
    stale = tmp_path / ".dist.apexnpu-staging-999999999-abc-0"
    (stale / "out").mkdir(parents=True)
    fake_cxx = script(
        str(tmp_path / "fakecxx"),
        """\
        for a in "$@"; do [ "$a" = --version ] && { echo "fakecxx 1.0"; exit 0; }; done
        exit 1
        """,
    )
    proc = bh.run(
        [
            "build",
            "--python=3.11",
            "--tree",
            tree,
            "-o",
            str(tmp_path / "dist"),
            "--object-cache",
            str(tmp_path / "cache"),
        ],
        env={"CXX": fake_cxx},
    )
    assert proc.returncode == 1  # fails while compiling, after the staging was set up
    assert not stale.exists()
