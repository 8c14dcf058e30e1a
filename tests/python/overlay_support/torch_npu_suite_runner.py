"""Runs test files of Huawei's torch_npu (github.com/Ascend/pytorch) against the emulator, as
``python test_x.py`` runs them on an NPU: each file runs as ``__main__``, so its own guard decides
what runs (some run only on the chip they name), and the ``unittest.main`` its ``run_tests()``
reaches runs the file's tests here, recording each outcome.

    python torch_npu_suite_runner.py HUAWEI_DIR TEST_FILE [--exclude TEST_ID ...]

HUAWEI_DIR holds what the tests take from Huawei's tree besides the emulator: its
``torch_npu/testing/`` package and the two helper modules that package imports from
``torch_npu/utils/`` (a path checker and its error codes). They are grafted into the emulator's
``torch_npu`` as extra package directories, so a name the emulator itself has always wins and
nothing else of Huawei's torch_npu is visible. Each TEST_FILE runs from its own directory (tests
read data beside them). Prints one JSON line: {test id: [outcome, message]}, outcome ok, fail,
error, skip or excluded (a TEST_ID given with --exclude, not run); a file that cannot be run is
one error under its own name, and one whose ``__main__`` ran no tests one skip.
"""

import json
import os
import runpy
import sys
import traceback
import unittest


def graft(huawei_dir):
    """Make Huawei's testing package and its helpers importable under the emulator's torch_npu."""
    import torch_npu
    import torch_npu.utils

    torch_npu.__path__.append(os.path.join(huawei_dir, "torch_npu"))
    torch_npu.utils.__path__.append(os.path.join(huawei_dir, "torch_npu", "utils"))


def graft_in_children(huawei_dir):
    """Make the processes that multiprocessing spawns graft Huawei's testing package too, before
    they import the test file (their ``__main__``, from which they take the function or test
    case they run): an installed torch_npu has it in every process."""
    import multiprocessing.spawn as spawn

    command_line = spawn.get_command_line
    here = os.path.dirname(os.path.abspath(__file__))
    prelude = (
        f"import sys; sys.path.insert(0, {here!r}); import torch_npu_suite_runner as r; "
        f"sys.path.remove({here!r}); r.graft({huawei_dir!r}); "
    )

    def grafting_command_line(**kwds):
        line = command_line(**kwds)
        if "-c" in line:
            at = line.index("-c") + 1
            line[at] = prelude + line[at]
        return line

    spawn.get_command_line = grafting_command_line


def test_id(test):
    """``<file stem>.<class>.<test>``: the file runs as __main__, which its ids would name."""
    return test.id().replace("__main__.", Recorder.stem + ".", 1)


class Recorder(unittest.TextTestResult):
    results = {}
    stem = ""

    def _put(self, test, outcome, message):
        Recorder.results[test_id(test)] = [outcome, message]

    def addSuccess(self, test):
        super().addSuccess(test)
        self._put(test, "ok", "")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._put(test, "fail", self._exc_info_to_string(err, test)[-3000:])

    def addError(self, test, err):
        super().addError(test, err)
        self._put(test, "error", self._exc_info_to_string(err, test)[-3000:])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._put(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._put(test, "ok", "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._put(test, "fail", "unexpected success")


def without(suite, excluded):
    """``suite`` less the tests whose ids are in ``excluded`` (recorded as excluded)."""
    kept = unittest.TestSuite()
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            kept.addTest(without(test, excluded))
        elif test_id(test) in excluded:
            Recorder.results[test_id(test)] = ["excluded", ""]
        else:
            kept.addTest(test)
    return kept


class FileRun:
    """``unittest.main`` while a file runs: its tests, less the excluded ones, recorded."""

    def __init__(self, excluded):
        self.excluded = excluded
        self.ran = False

    def __call__(self, module="__main__", *args, **kwargs):
        self.ran = True
        if isinstance(module, str):
            module = sys.modules[module]
        suite = without(unittest.defaultTestLoader.loadTestsFromModule(module), self.excluded)
        result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Recorder).run(
            suite
        )
        return type("Ran", (), {"result": result})()


def main(argv):
    excluded = {argv[i + 1] for i, a in enumerate(argv) if a == "--exclude"}
    positional = [
        a for i, a in enumerate(argv) if a != "--exclude" and (i == 0 or argv[i - 1] != "--exclude")
    ]
    huawei_dir, files = positional[0], positional[1:]
    import torch  # noqa: F401
    import torch_npu  # noqa: F401 - as every torch_npu test does

    graft(huawei_dir)
    graft_in_children(huawei_dir)
    for path in files:
        path = os.path.abspath(path)
        os.chdir(os.path.dirname(path))
        sys.path.insert(0, os.path.dirname(path))
        sys.argv = [path]
        run = unittest.main = FileRun(excluded)
        name = os.path.basename(path)
        Recorder.stem = os.path.splitext(name)[0]
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit:
            pass
        except BaseException:  # noqa: B902 - a file that fails to run is its one result
            Recorder.results[name] = ["error", traceback.format_exc()[-3000:]]
            continue
        if not run.ran:
            Recorder.results[name] = ["skip", "its __main__ runs no tests on this chip"]
    sys.stdout.flush()
    print(json.dumps(Recorder.results))


if __name__ == "__main__":
    main(sys.argv[1:])
