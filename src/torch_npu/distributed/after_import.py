"""Run a function on a module of torch once it is imported, without importing it first.

torch_npu changes parts of torch's distributed packages (FSDP's ShardedGradScaler, DTensor) when
it is imported. Importing those packages costs seconds that most scripts never need, so the
emulator waits for them: ``when_imported(name, fn)`` calls ``fn(module)`` right after the module
``name`` has been executed (or at once, when it already has been).
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

_pending: Dict[str, List[Callable[[Any], None]]] = {}
_lock = threading.Lock()


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a module someone waits for, it asks the finders after it and
    makes the loader they give run the waiting functions after the module's code."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Any = None) -> Any:
        if fullname not in _pending:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def run_then_patch(module: Any) -> None:
            exec_module(module)
            _run(fullname, module)

        loader.exec_module = run_then_patch  # this module's own loader (one per file)
        return spec


_finder = _Finder()


def _run(name: str, module: Any) -> None:
    with _lock:
        waiting = _pending.pop(name, [])
    for fn in waiting:
        fn(module)


def when_imported(name: str, fn: Callable[[Any], None]) -> None:
    """Call ``fn(module)`` once the module ``name`` is imported (now, if it is)."""
    module = sys.modules.get(name)
    if module is not None:
        fn(module)
        return
    with _lock:
        _pending.setdefault(name, []).append(fn)
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)
