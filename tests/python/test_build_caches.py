"""build's two caches have their own options: --clone-cache is where gen (run by build without
--tree) clones upstream, --object-cache where compiled objects and linked modules are kept.
--cache-dir, which named the object cache on build but names the clone cache on gen and
make-patch, is refused on build."""

import os
import subprocess
import textwrap

import pytest

import build_helpers as bh


def isolated_home(tmp_path):
    """HOME and XDG_CACHE_HOME in tmp_path, so a cache that is not where it should be shows."""
    home = tmp_path / "home"
    return home, {"HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}


def make_upstream(root):
    """A one-commit git repository (not Apex: the bundled npu.patch does not apply to it)."""
    bh.write_files({"apex/__init__.py": "x = 1\n"}, str(root))
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "one"], check=True)
    return subprocess.run(
        git + ["rev-parse", "HEAD"], check=True, stdout=subprocess.PIPE, universal_newlines=True
    ).stdout.strip()


# The one module the fake compiler links for real: the build reads the runtime's optimizer list
# from its section and the platform tag from its ELF headers.
FAKE_MODULE_SOURCE = (
    '[[gnu::used, gnu::section(".apexnpu_registry")]] const char registry[] = '
    '"{\\"schema\\": 1, \\"optimizers\\": []}";\n'
)


def fake_compiler(path):
    """A compiler that writes empty objects and depfiles, and for each module links a tiny real
    one (by the real compiler): the build runs through the object cache in a moment."""
    source = path + ".module.cpp"
    with open(source, "w") as f:
        f.write(FAKE_MODULE_SOURCE)
    with open(path, "w") as f:
        f.write(
            "#!/bin/sh\n"
            + textwrap.dedent(
                """\
            out=; dep=; prev=; shared=
            for a in "$@"; do
              [ "$a" = --version ] && { echo "fakecxx 1.0"; exit 0; }
              [ "$a" = -shared ] && shared=1
              [ "$prev" = -o ] && out=$a
              [ "$prev" = -MF ] && dep=$a
              prev=$a
            done
            [ -n "$shared" ] && exec c++ -shared -fPIC -o "$out" "%s"
            : > "$out"
            [ -n "$dep" ] && echo "$out:" > "$dep"
            exit 0
            """
                % source
            )
        )
    os.chmod(path, 0o755)
    return path


def test_clone_cache_is_where_builds_gen_clones_upstream(tmp_path):
    up = tmp_path / "up"
    commit = make_upstream(up)
    clones = tmp_path / "clones"
    home, env = isolated_home(tmp_path)
    args = [
        "--python=3.11",
        "--upstream",
        "file://" + str(up),
        "--ref",
        commit,
        "--clone-cache",
        str(clones),
        "-o",
        str(tmp_path / "dist"),
    ]
    # gen clones upstream, then the bundled patch fails on it: the error describes the upstream.
    proc, doc = bh.build_json(args, env=env)
    assert proc.returncode == 1, proc.stderr
    assert "did not apply" in proc.stderr, proc.stderr
    assert doc["upstream"]["fetched"] is True
    assert doc["upstream"]["repository"].startswith(str(clones / "repos") + os.sep)
    assert not (home / "cache" / "apexnpu" / "repos").exists()
    # --offline then reads that clone.
    proc, doc = bh.build_json(args + ["--offline"], env=env)
    assert proc.returncode == 1 and "did not apply" in proc.stderr, proc.stderr
    assert doc["upstream"]["fetched"] is False
    assert doc["upstream"]["commit"] == commit
    assert not (tmp_path / "dist").exists()


def test_object_cache_is_where_build_keeps_objects(tree, tmp_path):
    objects = tmp_path / "objects"
    home, env = isolated_home(tmp_path)
    env["CXX"] = fake_compiler(str(tmp_path / "fakecxx"))
    args = ["--python=3.11", "--tree", tree, "--object-cache", str(objects), "-j2"]
    proc, doc = bh.build_json(args + ["-o", str(tmp_path / "dist")], env=env)
    assert proc.returncode == 0, proc.stderr
    assert doc["cache_dir"] == str(objects)
    assert doc["compiled"] == doc["total"] > 0
    assert os.listdir(str(objects / "o")) and os.listdir(str(objects / "so"))
    assert not (home / "cache" / "apexnpu").exists()
    proc, again = bh.build_json(args + ["-o", str(tmp_path / "dist2")], env=env)
    assert proc.returncode == 0, proc.stderr
    assert again["compiled"] == 0 and again["cached"] == doc["total"]


@pytest.mark.parametrize("json", [False, True])
def test_cache_dir_is_refused_on_build(tree, tmp_path, json):
    out = tmp_path / "out"
    args = ["--python=3.11", "--tree", tree, "-o", str(out), "--cache-dir", str(tmp_path / "c")]
    proc = bh.run((["--json"] if json else []) + ["build"] + args)
    assert proc.returncode == 2, proc.stderr
    assert "--cache-dir is ambiguous on build" in proc.stderr, proc.stderr
    assert "--object-cache DIR" in proc.stderr and "--clone-cache DIR" in proc.stderr
    assert not out.exists() and not (tmp_path / "c").exists()
