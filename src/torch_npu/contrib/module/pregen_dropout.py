"""The emulator's first path of ``NpuPreGenDropout``; it lives in ``_ensemble_dropout``
(torch_npu's module), this one stays importable."""
from ._ensemble_dropout import NpuPreGenDropout  # noqa: F401

__all__ = ["NpuPreGenDropout"]
