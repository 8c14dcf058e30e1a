"""``torch_npu.contrib.function.matmul_transpose(a, b)`` = ``a @ b.transpose(-2, -1)`` with
torch_npu's backward (see ``_matmul_transpose``)."""

from ._matmul_transpose import MatmulApply

__all__ = ["matmul_transpose"]

matmul_transpose = MatmulApply.apply
