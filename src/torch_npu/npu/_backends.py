"""``torch.npu``'s switches of torch's backends: scaled dot-product attention and linalg.

torch_npu keeps the SDP switches as torch's own global flags (its NPU kernel does not read them)
and warns so; the emulated NPU does the same, so ``torch.backends.cuda``'s getters agree with
``torch.npu``'s. It has no linalg library to choose: ``preferred_linalg_library`` answers
torch's ``Default``, as torch_npu does.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Iterator, Union

import torch

__all__ = [
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "math_sdp_enabled",
    "mem_efficient_sdp_enabled",
    "preferred_linalg_library",
    "sdp_kernel",
]

_ONLY_FLAG = (
    "Currently, the device operator does not support {} sdp and only sets the global variable!"
)


def _flag(name: str) -> Any:
    """torch's C++ getter or setter ``name``; torch before 2.0 has no SDP backends to switch."""
    function = getattr(torch._C, name, None)
    if function is None:
        raise RuntimeError(
            f"torch {torch.__version__} has no scaled dot-product attention backends to "
            "switch (torch 2.0 added them)"
        )
    return function


def _checked(enabled: Any) -> bool:
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool, but got {type(enabled).__name__}")
    return enabled


def flash_sdp_enabled() -> bool:
    """Whether torch's flash SDP backend is enabled."""
    warnings.warn(_ONLY_FLAG.format("flash"))
    return _flag("_get_flash_sdp_enabled")()


def enable_flash_sdp(enabled: bool) -> None:
    warnings.warn(_ONLY_FLAG.format("flash"))
    _flag("_set_sdp_use_flash")(_checked(enabled))


def mem_efficient_sdp_enabled() -> bool:
    warnings.warn(_ONLY_FLAG.format("mem_efficient"))
    return _flag("_get_mem_efficient_sdp_enabled")()


def enable_mem_efficient_sdp(enabled: bool) -> None:
    warnings.warn(_ONLY_FLAG.format("mem_efficient"))
    _flag("_set_sdp_use_mem_efficient")(_checked(enabled))


def math_sdp_enabled() -> bool:
    warnings.warn(_ONLY_FLAG.format("math"))
    return _flag("_get_math_sdp_enabled")()


def enable_math_sdp(enabled: bool) -> None:
    warnings.warn(_ONLY_FLAG.format("math"))
    _flag("_set_sdp_use_math")(_checked(enabled))


@contextlib.contextmanager
def sdp_kernel(
    enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True
) -> Iterator[dict]:
    """Set the three SDP switches for the block; their previous states come back after it."""
    previous = (flash_sdp_enabled(), math_sdp_enabled(), mem_efficient_sdp_enabled())
    try:
        enable_flash_sdp(enable_flash)
        enable_math_sdp(enable_math)
        enable_mem_efficient_sdp(enable_mem_efficient)
        yield {}
    finally:
        enable_flash_sdp(previous[0])
        enable_math_sdp(previous[1])
        enable_mem_efficient_sdp(previous[2])


def preferred_linalg_library(backend: Union[None, str, Any] = None) -> Any:
    """torch's ``Default`` linalg backend, whatever is asked: the NPU has no cuSOLVER or MAGMA
    to prefer (torch_npu answers the same, with a warning)."""
    warnings.warn("torch.npu.preferred_linalg_library isn't implemented!")
    backends = getattr(torch._C, "_LinalgBackend", None)
    return None if backends is None else backends.Default
