"""``APEXNPU_FUSED_OPTIMIZER=1``: torch.optim's SGD, Adam, AdamW, Adadelta and RMSprop are
apex's NpuFused ones, so an unchanged script gets the fused update.

When apex is imported with the variable (or ``AIAK_FUSED_OPTIMIZER``) set, ``torch.optim.SGD``
and the others become subclasses of ``NpuFusedSGD``, ... that take torch's arguments: the ones
that choose torch's implementation (``foreach``, ``capturable``, ``differentiable``, ``fused``)
are accepted and left out, everything else goes to the fused class, whose state has torch's
names and layout (a state_dict moves to the torch class and back). ``maximize=True``, which the
fused kernels do not do, builds torch's own class instead, and so does torch 2.x's
``Adam(decoupled_weight_decay=True)`` (AdamW's update under Adam's name; torch.optim.AdamW is
the fused one). The first optimizer of each kind that
is built says so on stderr, in one line. Only the ``torch.optim.<Name>`` attributes change;
``torch.optim.adam.Adam`` and the like stay torch's. The notice and errors name the variable
that was read, ours or AIAK's. A script that never imports apex gets the switch with
``AIAK_FUSED_OPTIMIZER=1``: apex's wheel then imports apex at ``import torch``
(``_apex_aiak_startup``), so every optimizer built after that is the fused one.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Dict, Set

import torch

VARIABLE = "APEXNPU_FUSED_OPTIMIZER"
# torch.optim's name -> apex.optimizers' class
SWITCHED = {
    "SGD": "NpuFusedSGD",
    "Adam": "NpuFusedAdam",
    "AdamW": "NpuFusedAdamW",
    "Adadelta": "NpuFusedAdadelta",
    "RMSprop": "NpuFusedRMSprop",
}
# torch's arguments that pick an implementation of the same update; the fused one is another.
IMPLEMENTATION_CHOICES = ("foreach", "capturable", "differentiable", "fused")
# torch's arguments that, set, ask for an update the fused class does not make: torch's own
# class runs then.
TORCH_ONLY = ("maximize", "decoupled_weight_decay")

_originals: Dict[str, type] = {}
_announced: Set[str] = set()
_switched_by = [VARIABLE]  # the variable that switched, ours or AIAK's: what the notices name


def enabled() -> bool:
    from .. import aiak_names

    name, value = aiak_names.getenv(VARIABLE)
    value = (value or "0").strip()
    if value not in ("0", "1", ""):
        raise ValueError(
            f"{name}={value!r}: expected 0 (torch's optimizers, the default) "
            "or 1 (apex's NpuFused ones)"
        )
    _switched_by[0] = name
    return value == "1"


def original(name: str) -> type:
    """torch's own class behind ``torch.optim.<name>`` (switched or not)."""
    return _originals.get(name, getattr(torch.optim, name))


def _announce(name: str, fused: type, what: str) -> None:
    if name not in _announced:
        _announced.add(name)
        print(
            f"apex: {_switched_by[0]}=1: torch.optim.{name} {what} {fused.__module__}."
            f"{fused.__name__}",
            file=sys.stderr,
            flush=True,
        )


def _switched_class(name: str, fused: type, torch_class: type) -> type:
    torch_signature = inspect.signature(torch_class.__init__)
    fused_arguments = set(inspect.signature(fused.__init__).parameters) - {"self"}

    def fused_kwargs(args: Any, kwargs: Any) -> Dict[str, Any]:
        bound = torch_signature.bind(None, *args, **kwargs)
        bound.apply_defaults()
        given = dict(bound.arguments)
        given.pop("self")
        for choice in IMPLEMENTATION_CHOICES:
            given.pop(choice, None)
        return given

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        given = fused_kwargs(args, kwargs)
        for choice in TORCH_ONLY:
            if given.pop(choice, False):
                _announce(f"{name}({choice}=True)", torch_class, "stays")
                return torch_class(*args, **kwargs)  # not a cls: __init__ below is not run
        unknown = set(given) - fused_arguments
        if unknown:
            raise TypeError(
                f"torch.optim.{name} ({_switched_by[0]}=1): {fused.__name__} has no "
                f"{sorted(unknown)}"
            )
        return super(switched, cls).__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        given = fused_kwargs(args, kwargs)
        for choice in TORCH_ONLY:
            given.pop(choice, None)
        _announce(name, fused, "is")
        fused.__init__(self, **given)

    switched = type(
        fused.__name__,
        (fused,),
        {
            "__new__": __new__,
            "__init__": __init__,
            "__module__": fused.__module__,
            "__doc__": f"torch.optim.{name}'s arguments, {fused.__name__}'s update ({VARIABLE}=1).",
        },
    )
    return switched


def install() -> None:
    """Switch torch.optim's classes when the variable says so (idempotent)."""
    if not enabled() or _originals:
        return
    from apex.optimizers import npu_fused

    for name, fused_name in SWITCHED.items():
        torch_class = getattr(torch.optim, name)
        _originals[name] = torch_class
        setattr(
            torch.optim, name, _switched_class(name, getattr(npu_fused, fused_name), torch_class)
        )
