"""What the emulation needs from an aten operation's schema."""
from __future__ import annotations

from typing import Any

import torch

# Operations with nothing to compute: storage changes, and allocations whose values are
# unspecified (an fp32 round trip would read the garbage through the saturation check and raise
# the float status, as DDP's bucket allocation did).
UNCHANGED_OPS = frozenset({"aten::set_", "aten::resize_", "aten::resize_as_", "aten::empty",
                           "aten::empty_like", "aten::empty_strided", "aten::new_empty",
                           "aten::new_empty_strided"})


def runs_unchanged(func: Any) -> bool:
    """Views and metadata changes must act on the original tensor, never on an fp32 copy; so
    must collectives (``c10d::``), which fill their tensors in place and do no arithmetic the
    NPU would do differently (their schemas do not mark the tensors as written); allocations
    have no values to round."""
    schema = func._schema
    if schema.name.startswith("c10d::"):
        return True
    if any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns):
        return True
    if torch.Tag.inplace_view in getattr(func, "tags", ()):
        return True
    return schema.name in UNCHANGED_OPS
