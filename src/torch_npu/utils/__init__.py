"""``torch_npu.utils`` on the emulated NPU."""
from . import profiler  # noqa: F401
from .combine_tensors import (get_part_combined_tensor, is_combined_tensor_valid,  # noqa: F401
                              npu_combine_tensors)
