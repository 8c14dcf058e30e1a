"""Runs unit tests from Huawei's Ascend apex tree the way its tests/L0/run_test.py does on an NPU:
``import torch_npu``, ``device.CALCULATE_DEVICE = "npu:0"``, ``torch.npu.set_device``, then
unittest. Run from the tree's tests/L0 directory by the interpreter of a venv holding our wheels.

    python ascend_runner.py [--transfer] DIR/MODULE ...

``--transfer`` imports torch_npu.contrib.transfer_to_npu first, for tests written for CUDA.
Prints one JSON line: {test id: [outcome, message]} with outcome ok, fail, error or skip.
"""

import json
import os
import sys
import unittest


def main(argv):
    transfer = "--transfer" in argv
    modules = [a for a in argv if not a.startswith("--")]
    here = os.getcwd()
    sys.path.insert(0, here)
    import torch
    import torch_npu  # noqa: F401 - as every Ascend test does

    if transfer:
        import torch_npu.contrib.transfer_to_npu  # noqa: F401
    import device

    device.CALCULATE_DEVICE = "npu:0"
    torch.npu.set_device(device.CALCULATE_DEVICE)

    suite = unittest.TestSuite()
    for spec in modules:
        folder, name = os.path.split(spec)
        sys.path.insert(0, os.path.join(here, folder))
        suite.addTests(unittest.defaultTestLoader.loadTestsFromName(name))

    results = {}

    class Recorder(unittest.TextTestResult):
        def addSuccess(self, test):
            super().addSuccess(test)
            results[test.id()] = ["ok", ""]

        def addFailure(self, test, err):
            super().addFailure(test, err)
            results[test.id()] = ["fail", self._exc_info_to_string(err, test)[-3000:]]

        def addError(self, test, err):
            super().addError(test, err)
            results[test.id()] = ["error", self._exc_info_to_string(err, test)[-3000:]]

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            results[test.id()] = ["skip", reason]

    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Recorder)
    runner.run(suite)
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
