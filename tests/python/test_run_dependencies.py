"""The main job installs only what it needs (issue 46): `scripts/run.sh --print-packages` lists the
Debian packages of its dependency step, which must be exactly MAIN_PACKAGES below, so that a
package only the tests use (torch, clang, the cross compiler, qemu, gtest ...) cannot creep into
the step that a new user waits for. The CMake preset run.sh configures must build without the
test-only packages too: it is configured here with GTest and benchmark made unfindable."""

import os
import re
import shutil
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUN = os.path.join(REPO, "scripts", "run.sh")
SETUP = os.path.join(REPO, "scripts", "setup.sh")

# What `scripts/run.sh` needs to build the tool and write the wheels, and why.
MAIN_PACKAGES = {
    "g++",  # compiles the tool, and the runtime and binding inside `apexnpu build`
    "cmake",
    "ninja-build",
    "pkg-config",  # configure and build (pkg-config finds libgit2)
    "libgit2-dev",
    "libcli11-dev",
    "nlohmann-json3-dev",
    "libfmt-dev",
    "zlib1g-dev",
    "python3",
    "python3-dev",  # the wheel's target Python and the headers the binding needs
    "ca-certificates",  # libgit2 clones the default upstream over https
}

# Packages that only the tests, fuzzers or cross builds use: none may be in the main list.
TEST_ONLY_PACKAGES = {
    "python3-torch",
    "clang",
    "g++-aarch64-linux-gnu",
    "qemu-user",
    "debootstrap",
    "libgtest-dev",
    "libbenchmark-dev",
    "libpython3.11-dev:arm64",
}


def listed(argv):
    proc = subprocess.run(
        ["bash"] + argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        cwd=REPO,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert len(lines) == len(set(lines)), "a package is listed twice: {}".format(lines)
    return set(lines)


def test_run_sh_installs_exactly_the_main_jobs_packages():
    packages = listed([RUN, "--print-packages"])
    assert packages == MAIN_PACKAGES, (
        "run.sh's dependency step changed: added {}, dropped {}; a package the tests need "
        "belongs in `setup.sh test`".format(
            sorted(packages - MAIN_PACKAGES), sorted(MAIN_PACKAGES - packages)
        )
    )
    assert not packages & TEST_ONLY_PACKAGES


def test_the_test_list_adds_the_rest_to_the_main_list():
    main = listed([SETUP, "main", "--print"])
    test = listed([SETUP, "test", "--print"])
    assert main == MAIN_PACKAGES
    assert main < test
    assert TEST_ONLY_PACKAGES <= test
    # setup.sh alone (as older instructions call it) still installs everything.
    assert listed([SETUP, "--print"]) == test


def test_setup_sh_refuses_an_unknown_job():
    proc = subprocess.run(
        ["bash", SETUP, "tests", "--print"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "unknown argument 'tests'" in proc.stderr


def run_sh_preset():
    """The configure preset run.sh builds with (its one `cmake --preset NAME` line)."""
    with open(RUN) as f:
        presets = re.findall(r"^cmake --preset (\S+)", f.read(), re.M)
    assert len(presets) == 1, presets
    return presets[0]


def test_run_sh_preset_configures_without_the_test_packages(tmp_path):
    """Configured as run.sh does, but with GTest and benchmark unfindable (as on a machine with
    only MAIN_PACKAGES): the configure must pass, the build must hold no test target, and the
    tool must build."""
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        pytest.skip("cmake and ninja are needed to configure the preset")
    binary_dir = str(tmp_path / "build")
    proc = subprocess.run(
        [
            "cmake",
            "--preset",
            run_sh_preset(),
            "-B",
            binary_dir,
            "-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON",
            "-DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout
    targets = subprocess.run(
        ["ninja", "-C", binary_dir, "-t", "targets", "all"],
        stdout=subprocess.PIPE,
        universal_newlines=True,
        check=True,
    ).stdout
    assert "src/cli/apexnpu:" in targets
    assert "wheel_tests" not in targets and "runtime_bench" not in targets
    # The preset compiles in unity batches, where two files' file-local helpers of one name
    # collide: only building it shows they do not.
    build = subprocess.run(
        ["cmake", "--build", binary_dir, "-j", str(os.cpu_count() or 2), "--target", "apexnpu"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        timeout=1200,
    )
    assert build.returncode == 0, build.stdout[-4000:]
    version = subprocess.run(
        [os.path.join(binary_dir, "src", "cli", "apexnpu"), "--version"],
        stdout=subprocess.PIPE,
        universal_newlines=True,
        timeout=60,
    )
    assert version.returncode == 0 and version.stdout.strip(), version
