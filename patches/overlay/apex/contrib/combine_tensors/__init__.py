"""Tensor fusion (see ``combine_tensors``, the module Ascend's apex names so)."""

# ruff: noqa: F401  (re-exports)
from .combine_tensors import (
    SUPPORTED_DTYPES,
    CombineError,
    CombineTypeError,
    change_data_ptr,
    combine_npu,
    combined_offsets,
    get_aligned_storage_size,
    get_part_combined_tensor,
    is_combined_tensor_valid,
)
