"""The one declaration of the emulated operators: each operator module marks its public
functions with ``@operator``, and everything that lists operators reads ``OPERATORS`` (the
``torch_npu`` namespace and ``__all__``, ``install()``'s names on ``torch``, the tests and the
row check of docs/NPU_OPERATORS.md). A new operator is therefore its module, its test and its
docs row, with no list to extend by hand.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, TypeVar

F = TypeVar("F", bound=Callable)

# torch_npu.<name> -> the operator, in the order the modules registered them.
OPERATORS: Dict[str, Callable] = {}
# Operators Ascend code also calls as Tensor methods (x.npu_confusion_transpose(...)).
TENSOR_METHODS: List[str] = []


def _register(name: str, fn: Callable) -> None:
    if not name.isidentifier():
        raise ValueError(f"operator name {name!r} is not a Python identifier")
    known = OPERATORS.get(name)
    if known is not None and known is not fn:
        raise ValueError(
            f"operator {name!r} is declared twice: in {known.__module__} and in {fn.__module__}"
        )
    OPERATORS[name] = fn


def operator(fn: Optional[F] = None, *, aliases: Sequence[str] = (), tensor_method: bool = False):
    """Declare ``fn`` as ``torch_npu.<fn.__name__>`` (and ``torch_npu.<alias>`` for each of
    ``aliases``: torch_npu's other names of the same operator); ``tensor_method`` also makes it
    a ``torch.Tensor`` method. Use as ``@operator`` or ``@operator(aliases=(...))``."""
    if isinstance(aliases, str):
        raise TypeError(
            f"operator: aliases must be a sequence of names, not the string {aliases!r}"
        )

    def declare(fn: F) -> F:
        for name in (fn.__name__, *aliases):
            _register(name, fn)
        if tensor_method and fn.__name__ not in TENSOR_METHODS:
            TENSOR_METHODS.append(fn.__name__)
        return fn

    return declare if fn is None else declare(fn)
