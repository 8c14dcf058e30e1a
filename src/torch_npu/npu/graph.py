"""torch_npu 1.x's graph mode: ``torch.npu.enable_graph_mode`` / ``launch_graph`` /
``disable_graph_mode`` / ``is_graph_mode``.

On an NPU, operations issued in graph mode are gathered into a graph that ``launch_graph`` (or
``disable_graph_mode``) compiles and runs; a value read on the host before then is computed on
the way. The emulated NPU runs every operation as it is issued, so each tensor already holds
what the launched graph would give it, and only the mode's rules are kept: the mode is one per
process, and launching outside it is the error torch_npu raises. torch_npu 2.1 and later have
no graph mode (``torch.compile`` replaced it), so ``torch.npu`` offers these below torch 2.1
only (torch 1.x, and 2.0.x, whose torch_npu release candidates still had them).
"""

from __future__ import annotations

_graph_mode = False


def enable_graph_mode(verbose: bool = False) -> None:
    global _graph_mode
    if not isinstance(verbose, bool):
        raise TypeError(
            f"torch.npu.enable_graph_mode: verbose must be a bool, got {type(verbose).__name__}"
        )
    _graph_mode = True


def disable_graph_mode() -> None:
    global _graph_mode
    _graph_mode = False


def is_graph_mode() -> bool:
    return _graph_mode


def launch_graph() -> None:
    if not _graph_mode:
        raise RuntimeError("Npu run mode must be graph mode when launch graph")
