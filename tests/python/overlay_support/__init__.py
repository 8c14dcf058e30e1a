"""Makes the overlay importable without upstream Apex: ``patches/overlay`` goes on sys.path, so
``apex`` is a namespace package holding only the overlay's modules."""
from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
OVERLAY_DIR = os.path.join(REPO_ROOT, "patches", "overlay")


def use_overlay() -> str:
    """Put the overlay first on sys.path (idempotent) and return its directory."""
    if OVERLAY_DIR not in sys.path:
        sys.path.insert(0, OVERLAY_DIR)
    import apex

    where = list(getattr(apex, "__path__", []))
    if os.path.join(OVERLAY_DIR, "apex") not in where:
        raise RuntimeError(f"'apex' resolves to {where}, not to the overlay in {OVERLAY_DIR}")
    return OVERLAY_DIR


def overlay_env() -> dict:
    """Environment for a child Python that imports the overlay."""
    env = dict(os.environ)
    env["PYTHONPATH"] = OVERLAY_DIR + os.pathsep + env.get("PYTHONPATH", "")
    return env
