"""``torch_npu.contrib.module.npu_modules``: ``DropoutWithByteMask`` (see
``torch_npu._ops.dropout_with_byte_mask``)."""

from ..._ops.dropout_with_byte_mask import DropoutWithByteMask

__all__ = ["DropoutWithByteMask"]
