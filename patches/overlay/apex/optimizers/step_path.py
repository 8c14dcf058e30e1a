"""Which code runs a fused step: the runtime's kernels or torch operations on combined tensors.

``APEXNPU_OPTIM_PATH`` = ``torch`` forces torch operations (the real-NPU path, testable on the
CPU), ``runtime`` requires the runtime kernels, ``auto`` (default) uses the runtime kernels on the
emulated NPU when ``apex._apexnpu`` provides them.
"""

from __future__ import annotations

from apex.npu.backend import KERNEL_PATHS as PATHS  # noqa: F401 - re-exported
from apex.npu.backend import requested_kernel_path as requested_path  # noqa: F401
from apex.npu.backend import runtime_kernels  # noqa: F401
from apex.npu.fused_support.fused_clip import total_norm  # noqa: F401 - re-exported
