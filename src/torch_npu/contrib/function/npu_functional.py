"""``torch_npu.contrib.function.npu_functional``: ``dropout_with_byte_mask(input1, p=0.5,
training=True, inplace=False)`` (see ``torch_npu._ops.dropout_with_byte_mask``)."""

from ..._ops.dropout_with_byte_mask import (
    functional_dropout_with_byte_mask as dropout_with_byte_mask,
)

__all__ = ["dropout_with_byte_mask"]
