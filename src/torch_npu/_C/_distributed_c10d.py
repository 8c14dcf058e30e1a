"""``torch_npu._C._distributed_c10d``: HCCL's process group class, which scripts reach for its
``Options`` (``ProcessGroupHCCL.Options()``) and transfer_to_npu puts in place of NCCL's."""

from __future__ import annotations

from ..distributed.hccl_group import HcclProcessGroup as ProcessGroupHCCL

__all__ = ["ProcessGroupHCCL"]
