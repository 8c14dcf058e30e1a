"""AIAK-Training's names for what this apex offers under its own.

Baidu's AIAK-Training, a CUDA training image, adds to torch what apex has here: ``AIAK_*``
variables that switch gradient compression, hierarchical all-reduce and fused optimizers,
``torch.cuda.amp.aiak_amp_decorate`` / ``aiak_amp_parameters`` (apex's O2 under torch-native AMP
code) and ``torch.optim.LAMB``. Scripts written for it run here under these names (the whole
story: docs/ASCEND_APEX.md, "Beyond the originals"):

- ``AIAK_<X>`` environment variables stand for ``APEXNPU_<X>`` (``AIAK_FP16_COMPRESSION``,
  ``AIAK_POWERSGD_COMPRESSION``, ``AIAK_MATRIX_APPROXIMATION_RANK``, ``AIAK_START_COMPRESS_ITER``,
  ``AIAK_HIERARCHICAL_ALLREDUCE``, ``AIAK_FUSED_OPTIMIZER``); when both are set ours wins, said
  once per variable on stderr.
- ``torch.npu.amp.aiak_amp_decorate`` / ``aiak_amp_parameters`` (``torch.cuda.amp.`` under
  ``transfer_to_npu``, which makes it the same module) are ``amp_decorate`` / ``amp_parameters``.
- ``torch.optim.LAMB`` is ``apex.optimizers.LAMB`` where torch has none. Installed by apex, not
  by torch_npu, which never imports apex.

An AIAK script never imports apex: when an ``AIAK_*`` variable is set, apex's wheel imports it
for the script at ``import torch`` (the start-up hook ``_apex_aiak_startup``, beside apex).
"""

from __future__ import annotations

import os
import sys
from typing import Optional, Set, Tuple

import torch

PREFIX, AIAK_PREFIX = "APEXNPU_", "AIAK_"
_said: Set[str] = set()


def getenv(name: str) -> Tuple[str, Optional[str]]:
    """(the variable read, its value or None) for ``APEXNPU_<X>``, else ``AIAK_<X>``."""
    assert name.startswith(PREFIX), name
    aiak = AIAK_PREFIX + name[len(PREFIX) :]
    ours, theirs = os.environ.get(name), os.environ.get(aiak)
    if ours is not None and theirs is not None and name not in _said:
        _said.add(name)
        print(
            f"apex: both {name}={ours!r} and {aiak}={theirs!r} are set; {name} is used",
            file=sys.stderr,
            flush=True,
        )
    if ours is None and theirs is not None:
        return aiak, theirs
    return name, ours


def install() -> None:
    """The AIAK functions on torch.npu.amp and torch.optim.LAMB (idempotent)."""
    from .amp.amp_decorate import amp_decorate, amp_parameters

    amp = getattr(getattr(torch, "npu", None), "amp", None)
    if amp is not None:
        amp.aiak_amp_decorate = amp_decorate
        amp.aiak_amp_parameters = amp_parameters
    if "LAMB" in vars(torch.optim) or getattr(torch.optim, "_apexnpu_lamb", False):
        return
    # Looked up when first asked for (module __getattr__): apex.optimizers may still be
    # importing when apex.npu is.
    before = vars(torch.optim).get("__getattr__")

    def __getattr__(name):
        if name == "LAMB":
            from apex.optimizers.lamb import LAMB

            torch.optim.LAMB = LAMB
            return LAMB
        if before is not None:
            return before(name)
        raise AttributeError(f"module 'torch.optim' has no attribute {name!r}")

    torch.optim.__getattr__ = __getattr__
    torch.optim._apexnpu_lamb = True
