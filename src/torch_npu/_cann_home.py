"""``ASCEND_HOME_PATH``, which CANN's ``set_env.sh`` exports on every NPU machine.

torch_npu cannot run there without it, so libraries take it as given: DeepSpeed's NPU op
builders read ``os.environ["ASCEND_HOME_PATH"]`` whenever one is made (``init_distributed``
makes one), and fail with a KeyError where it is unset. The emulator is the CANN of this
machine: when the variable is unset, importing torch_npu sets it to the emulator's package
directory. It holds no CANN install information (``ascend_*_install.info``), so whoever reads
a CANN version there finds none, as ``torch_npu.utils.collect_env`` reports ("not known"), and
DeepSpeed's builders take their no-CANN path (they build nothing here; see docs/EMULATOR.md).
A value already set is left alone.
"""

from __future__ import annotations

import os

VARIABLE = "ASCEND_HOME_PATH"


def install() -> None:
    """Export ``ASCEND_HOME_PATH`` (the emulator's package directory) unless it is set."""
    if not os.environ.get(VARIABLE):
        os.environ[VARIABLE] = os.path.dirname(os.path.abspath(__file__))
