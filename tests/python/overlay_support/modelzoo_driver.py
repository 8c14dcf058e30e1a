"""Runs a model-zoo recipe's script as ``__main__`` with what it imports that is not here standing
in, as the tests of the recipes copy it beside them:

    python driver.py SCRIPT ARGS...

- NVIDIA's dllogger (not on PyPI; the recipes only log through it): each record printed as
  ``DLL <step> <json>``;
- numpy's aliases ``np.float``/``np.int``/``np.bool`` (removed in numpy 1.24): the builtins they
  named;
- on torch 2.x, ``torch._six`` (removed in torch 2.0): the three names the recipes take from it.
"""

import collections.abc
import json
import math
import runpy
import sys
import types

import numpy
import torch

for name, kind in (("float", float), ("int", int), ("bool", bool)):
    if name not in numpy.__dict__:
        setattr(numpy, name, kind)


def standin(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


class Backend:
    def __init__(self, verbosity=0, filename=None, append=False, **formats):
        pass

    def log(self, timestamp, elapsedtime, step, data):
        pass

    def metadata(self, timestamp, elapsedtime, metric, metadata):
        pass

    def flush(self):
        pass


class Logger:
    backends = []


def init(backends):
    Logger.backends = list(backends)


def log(step, data, verbosity=1):
    print("DLL", step, json.dumps(data, default=str), flush=True)


standin(
    "dllogger",
    Backend=Backend,
    JSONStreamBackend=Backend,
    StdOutBackend=Backend,
    GLOBAL_LOGGER=Logger,
    Verbosity=types.SimpleNamespace(OFF=-1, DEFAULT=0, VERBOSE=1),
    init=init,
    log=log,
    metadata=lambda metric, metadata: None,
    flush=lambda: None,
)
if int(torch.__version__.split(".")[0]) >= 2:
    standin("torch._six", string_classes=(str,), container_abcs=collections.abc, inf=math.inf)

script, sys.argv = sys.argv[1], sys.argv[1:]
sys.path.insert(0, ".")
runpy.run_path(script, run_name="__main__")
