"""Runs test files of Huawei's torch_npu (github.com/Ascend/pytorch) against the emulator, as
``python test_x.py`` runs them on an NPU: ``import torch_npu``, then unittest over the file.

    python torch_npu_suite_runner.py HUAWEI_DIR TEST_FILE [--exclude TEST_ID ...]

HUAWEI_DIR holds what the tests take from Huawei's tree besides the emulator: its
``torch_npu/testing/`` package and the two helper modules that package imports from
``torch_npu/utils/`` (a path checker and its error codes). They are grafted into the emulator's
``torch_npu`` as extra package directories, so a name the emulator itself has always wins and
nothing else of Huawei's torch_npu is visible. Each TEST_FILE runs from its own directory (tests
read data beside them). Prints one JSON line: {test id: [outcome, message]}, outcome ok, fail,
error, skip or excluded (a TEST_ID given with --exclude, not run); a file that cannot be imported
is one error under its own name.
"""
import importlib.util
import json
import os
import sys
import traceback
import unittest


def graft(huawei_dir):
    """Make Huawei's testing package and its helpers importable under the emulator's torch_npu."""
    import torch_npu
    import torch_npu.utils

    torch_npu.__path__.append(os.path.join(huawei_dir, "torch_npu"))
    torch_npu.utils.__path__.append(os.path.join(huawei_dir, "torch_npu", "utils"))


def load(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Recorder(unittest.TextTestResult):
    results = {}

    def _put(self, test, outcome, message):
        Recorder.results[test.id()] = [outcome, message]

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
        elif test.id() in excluded:
            Recorder.results[test.id()] = ["excluded", ""]
        else:
            kept.addTest(test)
    return kept


def main(argv):
    excluded = {argv[i + 1] for i, a in enumerate(argv) if a == "--exclude"}
    positional = [a for i, a in enumerate(argv)
                  if a != "--exclude" and (i == 0 or argv[i - 1] != "--exclude")]
    huawei_dir, files = positional[0], positional[1:]
    import torch  # noqa: F401
    import torch_npu  # noqa: F401 - as every torch_npu test does

    graft(huawei_dir)
    for path in files:
        path = os.path.abspath(path)
        os.chdir(os.path.dirname(path))
        sys.path.insert(0, os.path.dirname(path))
        sys.argv = [path]
        try:
            module = load(path)
        except BaseException:  # noqa: B902 - an import that fails is the file's one result
            Recorder.results[os.path.basename(path)] = ["error", traceback.format_exc()[-3000:]]
            continue
        suite = without(unittest.defaultTestLoader.loadTestsFromModule(module), excluded)
        unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Recorder).run(suite)
    sys.stdout.flush()
    print(json.dumps(Recorder.results))


if __name__ == "__main__":
    main(sys.argv[1:])
