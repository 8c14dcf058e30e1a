"""The ``torch_npu`` operators of Ascend training code (``torch_npu.npu_*``, ``fast_gelu``,
``torch.nn.DropoutWithByteMask``), on the emulated NPU: computed on the host in fp32, fp16
results stored once with the NPU's saturation and float status (``_precision``), with their
gradients where torch_npu has a backward. One operator, or one tight family, per module; each
declares its operators with ``@operator`` (``_registry``), and importing this package imports
every module whose name has no leading underscore, so ``OPERATORS`` lists them all.

``install()`` puts them where Ascend scripts call them besides ``torch_npu.<name>``: on ``torch``
(old scripts call ``torch.npu_linear``, ``torch.fast_gelu``...), the Tensor method
``npu_confusion_transpose``, ``torch.nn.DropoutWithByteMask`` and
``torch.nn.functional.dropout_with_byte_mask``.
"""

# ruff: noqa: E402  (imports placed after setup code)
from __future__ import annotations

import importlib
import pkgutil

import torch

from ._registry import OPERATORS, TENSOR_METHODS, operator

# Every operator module registers its operators as it is imported (helpers start with "_").
for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
del _module

from .dropout_with_byte_mask import DropoutWithByteMask, functional_dropout_with_byte_mask

# torch_npu._ops.<name>, as before the registry, for code that imports an operator from here.
globals().update(OPERATORS)

__all__ = sorted(OPERATORS) + [
    "DropoutWithByteMask",
    "functional_dropout_with_byte_mask",
    "OPERATORS",
    "TENSOR_METHODS",
    "install",
    "operator",
]


def install() -> None:
    """Expose the operators on torch as torch_npu does (idempotent; torch's own names win)."""
    for name, fn in OPERATORS.items():
        if not hasattr(torch, name):
            setattr(torch, name, fn)
    for name in TENSOR_METHODS:
        if not hasattr(torch.Tensor, name):
            setattr(torch.Tensor, name, OPERATORS[name])
    if not hasattr(torch.nn, "DropoutWithByteMask"):
        torch.nn.DropoutWithByteMask = DropoutWithByteMask
    if not hasattr(torch.nn.functional, "dropout_with_byte_mask"):
        torch.nn.functional.dropout_with_byte_mask = functional_dropout_with_byte_mask
    from . import sdpa  # torch's SDPA on NPU tensors as one fused kernel

    sdpa.install()
    from . import recurrent  # torch's LSTM/GRU (and cells) on NPU tensors as one kernel each

    recurrent.install()
    from . import packed_sequence  # packed sequences: NPU data, host lengths, as torch keeps them

    packed_sequence.install()
    from . import int32_one_hot  # F.one_hot of int32 classes, as torch_npu's kernel takes them

    int32_one_hot.install()
