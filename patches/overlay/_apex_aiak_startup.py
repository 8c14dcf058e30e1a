"""AIAK-Training's names for scripts that never import apex, imported at interpreter start-up by
``apex-aiak-startup.pth`` (both files are in apex's wheel, beside the ``apex`` package).

Baidu's AIAK-Training image builds its additions into torch itself: a script written for it
imports torch and nothing else, then calls ``torch.cuda.amp.aiak_amp_decorate``, builds
``optim.LAMB`` or sets ``AIAK_FUSED_OPTIMIZER=1``. Here these belong to apex
(``apex.npu.aiak_names``), so for such a script apex is imported as soon as torch and torch_npu
are: a finder on ``sys.meta_path`` sees torch and torch_npu being imported and, when the last of
them has run, imports apex, which installs what the ``AIAK_*`` variables ask for. The finder
then leaves ``sys.meta_path``; it never touches another module's import.

- ``import torch`` first (AIAK's scripts): apex is imported when torch has run, and imports
  torch_npu (Huawei's, or the emulator) itself, so optimizers built after ``import torch`` are
  already the fused ones.
- ``import torch_npu`` first (it imports torch): apex waits for torch_npu to finish.
- Huawei's torch_npu loaded by torch's own ``import torch`` (its autoload): apex waits for torch.

The .pth line imports this module only when some ``AIAK_*`` variable is set and
``APEXNPU_AIAK_STARTUP`` is not 0: without one start-up costs a scan of ``os.environ`` and
nothing else happens. ``APEXNPU_AIAK_STARTUP=0`` turns the hook off with AIAK variables set
(apex then reads them once the script imports it). When apex cannot be imported (no torch_npu)
this says so in one line on stderr and torch works on.

Standard library only, and Python 3.7's syntax: it runs in every Python of the environment,
before anything else is imported.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional, Set

SWITCH = "APEXNPU_AIAK_STARTUP"
AIAK_PREFIX = "AIAK_"
WATCHED = ("torch", "torch_npu")

_running: Set[str] = set()  # the watched modules whose code is running now
_state = {"done": False}


def aiak_variables(environ: Any = None) -> list:
    """The names of the ``AIAK_*`` variables set, sorted."""
    return sorted(
        n for n in (os.environ if environ is None else environ) if n.startswith(AIAK_PREFIX)
    )


def wanted(environ: Any = None) -> bool:
    """Whether the hook should act: some AIAK_* variable is set and APEXNPU_AIAK_STARTUP is not
    0. Any other value of the switch than 0, 1 or empty is a ValueError naming it."""
    environ = os.environ if environ is None else environ
    value = environ.get(SWITCH, "1").strip()
    if value not in ("0", "1", ""):
        raise ValueError(
            f"{SWITCH}={value!r}: expected 1 (apex is imported for scripts run with "
            "AIAK_* variables, the default) or 0 (it is not)"
        )
    return value != "0" and bool(aiak_variables(environ))


class _Loader:
    """The loader of torch or torch_npu, wrapped to learn when the module's code has run. The
    module sees its own loader from the start."""

    def __init__(self, loader: Any, name: str) -> None:
        self.loader, self.name = loader, name

    def __getattr__(self, attribute: str) -> Any:  # get_code, is_package, ...: the loader's
        if attribute == "loader":  # not set yet (a copy being made): no recursion
            raise AttributeError(attribute)
        return getattr(self.loader, attribute)

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__loader__ = self.loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.loader
        _running.add(self.name)
        try:
            self.loader.exec_module(module)
        finally:
            _running.discard(self.name)
        _module_ran(self.name)


class _Finder:
    """First on sys.meta_path until apex is imported: asks the finders after it for torch and
    torch_npu, and wraps the loader they give."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Optional[Any]:
        if name not in WATCHED or _state["done"]:
            return None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, name)
        return spec


_finder = _Finder()


def _module_ran(name: str) -> None:
    """torch or torch_npu has run: import apex unless the other is still running (it imported
    this one, and apex waits for it to finish)."""
    other = "torch_npu" if name == "torch" else "torch"
    if other not in _running:
        _import_apex()


def _import_apex() -> None:
    if _state["done"]:
        return
    _state["done"] = True
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    try:
        import apex  # noqa: F401  (installs what the AIAK_* variables ask for)
    except ImportError as error:
        print(
            f"apex: {', '.join(aiak_variables())} set, but apex cannot be imported, so "
            f"AIAK-Training's names are not installed: {error}",
            file=sys.stderr,
            flush=True,
        )


def install() -> None:
    """Called by apex-aiak-startup.pth when an AIAK_* variable is set (idempotent)."""
    if _state["done"] or _finder in sys.meta_path or not wanted():
        return
    if "torch" in sys.modules:  # imported before site ran this: act now
        _import_apex()
        return
    sys.meta_path.insert(0, _finder)
