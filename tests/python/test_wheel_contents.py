"""The apex wheel holds what upstream Apex's setup.py packages (issue 46): the packages that
setuptools' find_packages finds with upstream's excludes (folders with an __init__.py, reached
through packages only), their modules, and the package data apexnpu declares (py.typed, *.json);
never docs, READMEs, examples, shell scripts, images or dotfiles. The reference is setuptools
itself, run on the same tree. Packages named test/tests are left out on purpose (upstream's CUDA
tests; the pinned upstream has none with an __init__.py).

In CI, a fixture tree carrying each kind of stray file is built; with APEXNPU_TEST_UPSTREAM (a
path or URL of NVIDIA Apex), the main job itself (gen, then build --wheel, as scripts/run.sh
does) is built, and both of its wheels go through check-wheel-contents and `twine check`."""

import fnmatch
import glob
import os

import pytest

import build_helpers as bh
import wheel_checkers as wc

UPSTREAM = os.environ.get("APEXNPU_TEST_UPSTREAM")
# upstream Apex's setup.py: find_packages(exclude=(...)), the same at the pinned commit and today.
UPSTREAM_EXCLUDES = (
    "build",
    "csrc",
    "include",
    "tests",
    "dist",
    "docs",
    "tests",
    "examples",
    "apex.egg-info",
)
DECLARED_DATA = ("py.typed", "*.json")
# Beside the package, the start-up hook that apexnpu adds from the overlay's root (a setup.py would
# declare it as py_modules=["_apex_aiak_startup"] and the .pth as data at the root).
STARTUP_FILES = {"_apex_aiak_startup.py", "apex-aiak-startup.pth"}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

# What upstream's setup.py would never package, each kind in a package and out of one.
STRAY = {
    "apex/README.md": "# apex\n",
    "apex/sub/README.md": "# sub\n",
    "apex/sub/FAQs.md": "faq\n",
    "apex/sub/diagram.png": PNG,
    "apex/sub/.gitignore": "*.o\n",
    # The same script in two packages: check-wheel-contents' W002 (duplicate files).
    "apex/sub/test.sh": "#!/bin/sh\npython -m apex.sub\n",
    "apex/contrib/test.sh": "#!/bin/sh\npython -m apex.sub\n",
    "apex/contrib/COPYRIGHT": "(c)\n",
    # A folder without __init__.py is no package: neither it nor what is under it goes in.
    "apex/examples/train.py": "print('example')\n",
    "apex/examples/imagenet/test.sh": "#!/bin/sh\n",
    "apex/examples/inner/__init__.py": "",
    "apex/examples/inner/data.json": "{}\n",
}


def reference_files(tree, package="apex"):
    """What setuptools packages from tree: find_packages with upstream's excludes, then each
    package's *.py and the declared data (build_py's globs), minus test packages."""
    import setuptools

    files = set()
    for name in setuptools.find_packages(where=tree, exclude=UPSTREAM_EXCLUDES):
        parts = name.split(".")
        if parts[0] != package or {"test", "tests"} & set(parts):
            continue
        folder = os.path.join(tree, *parts)
        for entry in os.listdir(folder):
            path = os.path.join(folder, entry)
            if (
                os.path.isfile(path)
                and not os.path.islink(path)
                and (
                    fnmatch.fnmatch(entry, "*.py")
                    or any(fnmatch.fnmatch(entry, p) for p in DECLARED_DATA)
                )
            ):
                files.add("/".join(parts + [entry]))
    return files


def apex_files(wheel):
    """The wheel's members from the tree: not its metadata, not the modules the build compiled."""
    return {p for p in bh.read_wheel(wheel) if ".dist-info/" not in p and not p.endswith(".so")}


def strays(files):
    return sorted(
        p
        for p in files
        if os.path.basename(p).startswith(".")
        or "/examples/" in p
        or p.endswith((".md", ".sh", ".png", ".txt"))
        or os.path.basename(p) == "COPYRIGHT"
    )


@pytest.fixture(scope="module")
def fixture_build(tmp_path_factory):
    tree = bh.write_fixture_tree(str(tmp_path_factory.mktemp("fixture")))
    bh.write_files(STRAY, tree)
    out = str(tmp_path_factory.mktemp("dist"))
    proc, doc = bh.build_json(
        [
            "--python=" + bh.SYSTEM_PYTHON,
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
    (wheel,) = [w["wheel"] for w in doc["wheels"]]
    return tree, wheel


def test_a_fixture_trees_docs_scripts_images_and_dotfiles_stay_out(fixture_build):
    tree, wheel = fixture_build
    files = apex_files(wheel)
    assert files == bh.EXPECTED_PACKAGE_FILES, sorted(files ^ bh.EXPECTED_PACKAGE_FILES)
    assert files == reference_files(tree)
    assert not strays(files)


def test_check_wheel_contents_passes_on_the_fixture_wheel(fixture_build, tmp_path_factory):
    _, wheel = fixture_build
    checkers = wc.checkers(tmp_path_factory)
    proc = checkers.check_wheel_contents(wheel, wc.declared_toplevel(bh.read_wheel(wheel)))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def main_job(tmp_path_factory):
    """The main job on real upstream Apex: gen -o apex, then build --tree apex --wheel."""
    if not UPSTREAM:
        pytest.skip("APEXNPU_TEST_UPSTREAM is not set (path or URL of an NVIDIA Apex repository)")
    work = tmp_path_factory.mktemp("main-job")
    tree = str(work / "apex")
    gen = bh.run(["gen", "--upstream", UPSTREAM, "-o", tree])
    assert gen.returncode == 0, gen.stderr
    out = str(work / "dist")
    proc, doc = bh.build_json(
        [
            "--python=" + bh.SYSTEM_PYTHON,
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
    assert proc.returncode == 0, proc.stderr
    wheels = sorted(glob.glob(os.path.join(out, "*.whl")))
    assert len(wheels) == 2, wheels  # apex's and the emulator's
    return tree, doc["wheels"][0]["wheel"], wheels


def test_the_main_jobs_apex_wheel_holds_what_setuptools_would(main_job):
    tree, wheel, _ = main_job
    files = apex_files(wheel)
    expected = reference_files(tree) | STARTUP_FILES
    assert files == expected, {
        "extra": sorted(files - expected),
        "missing": sorted(expected - files),
    }
    assert not strays(files)
    # The upstream's stray files are really in the tree, so the check above means something.
    assert strays(
        os.path.relpath(os.path.join(d, f), tree)
        for d, _, fs in os.walk(os.path.join(tree, "apex"))
        for f in fs
    )


def test_the_checkers_pass_the_main_jobs_wheels(main_job, tmp_path_factory):
    _, _, wheels = main_job
    checkers = wc.checkers(tmp_path_factory)
    for wheel in wheels:
        proc = checkers.check_wheel_contents(wheel, wc.declared_toplevel(bh.read_wheel(wheel)))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.strip() == "{}: OK".format(wheel), proc.stdout
        proc = checkers.twine_check(wheel)
        assert proc.returncode == 0, proc.stdout + proc.stderr
