"""``torch_npu.utils`` on the emulated NPU."""

# ruff: noqa: F401  (re-exports)
from . import profiler  # noqa: F401
from .combine_tensors import get_part_combined_tensor, is_combined_tensor_valid, npu_combine_tensors
from ..npu._cann import get_cann_version
