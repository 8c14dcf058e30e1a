"""``torch_npu.utils`` on the emulated NPU."""
from . import profiler  # noqa: F401
