"""The emulated NPUs' random number generators.

As torch_npu's, every NPU has its own default generator, apart from the host's: seeding an NPU
leaves the host's numbers alone, and the random operations of NPU tensors (and makers with an NPU
``device``) draw from their NPU's generator. ``torch.Generator(device="npu")`` makes a further
one. A generator's state is torch_npu's: a seed and an offset, 16 bytes (the seed's 8, then the
offset's 8, little-endian; 8 bytes are a seed at offset 0), so states saved on a real NPU load
here and the other way round.

The numbers come from torch's CPU kernels and their Mersenne Twister: each draw seeds it from
(seed, offset) and advances the offset, so a state gives the same numbers every time, and seed s
at offset 0 gives what the host gives after ``torch.manual_seed(s)``. They are not a real NPU's
Philox numbers. An operation with a ``generator`` argument is handed the NPU's generator; one
without (``rand_like``, ``native_dropout``) runs with the host's generator set from the NPU's
state, which is put back after it (another thread's host draws in between would see it).
"""

from __future__ import annotations

import os
import struct
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from . import devices, placement

_MASK = (1 << 64) - 1
STEP = 1  # offset advance per draw
_TorchGenerator = torch._C.Generator
_local = threading.local()


def _splitmix(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def engine_seed(seed: int, offset: int) -> int:
    """The host generator's seed for the draw at (seed, offset): the seed itself at offset 0."""
    return seed if offset == 0 else _splitmix((seed + _splitmix(offset)) & _MASK)


def _unsigned_seed(seed: Any) -> int:
    seed = int(seed)
    if seed < 0:
        seed += 1 << 64
    if not 0 <= seed <= _MASK:
        raise RuntimeError("Overflow when unpacking long")
    return seed


class NpuGenerator(_TorchGenerator):
    """A generator of NPU ``index``: torch_npu's state (seed, offset) over a host engine that
    each draw seeds (see the module)."""

    def __new__(cls, index: int = 0) -> "NpuGenerator":
        return super().__new__(cls)

    def __init__(self, index: int = 0) -> None:
        self.device_index = index
        self._seed = 67280421310721  # torch_npu's default seed, as CUDA's
        self._offset = 0
        _register(self)

    @property
    def device(self) -> Any:
        return torch.device("npu", self.device_index)

    def manual_seed(self, seed: Any) -> "NpuGenerator":
        self._seed, self._offset = _unsigned_seed(seed), 0
        return self

    def seed(self) -> int:
        """A nondeterministic seed, set and returned."""
        self._seed = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self._offset = 0
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_offset(self) -> int:
        return self._offset

    def set_offset(self, offset: int) -> "NpuGenerator":
        self._offset = int(offset)
        return self

    def get_state(self) -> torch.Tensor:
        """The state as torch_npu gives it: 16 bytes, the seed's and then the offset's."""
        data = struct.pack("<Qq", self._seed, self._offset)
        return torch.tensor(list(data), dtype=torch.uint8)

    def set_state(self, new_state: torch.Tensor) -> "NpuGenerator":
        if not isinstance(new_state, torch.Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype != torch.uint8:
            raise RuntimeError(f"expected a torch.ByteTensor, but got {new_state.dtype}")
        data = bytes(new_state.detach().cpu().contiguous().view(-1).tolist())
        if len(data) == 8:  # a seed alone
            self._seed, self._offset = struct.unpack("<Q", data)[0], 0
        elif len(data) == 16:
            self._seed, self._offset = struct.unpack("<Qq", data)
        else:
            raise RuntimeError("RNG state is wrong size")
        return self

    def clone_state(self) -> "NpuGenerator":
        twin = NpuGenerator(self.device_index)
        twin._seed, twin._offset = self._seed, self._offset
        return twin

    def graphsafe_get_state(self) -> "NpuGenerator":
        return self.clone_state()

    def graphsafe_set_state(self, state: "NpuGenerator") -> "NpuGenerator":
        self._seed, self._offset = state._seed, state._offset
        return self

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...], Tuple[int, int, torch.Tensor]]:
        return (torch.Generator, (self.device,), (self._seed, self._offset, self.get_state()))

    def __setstate__(self, state: Tuple[int, Optional[int], torch.Tensor]) -> None:
        self._seed, offset = int(state[0]), state[1]
        self._offset = 0 if offset is None else int(offset)

    def next_engine(self) -> "NpuGenerator":
        """This generator as torch's kernels use it, seeded for its next draw (the offset then
        advances)."""
        _TorchGenerator.manual_seed(self, engine_seed(self._seed, self._offset))
        self._offset += STEP
        return self


# torch hands a dispatch mode a new ``torch._C.Generator`` object for the same generator, so
# NPU generators are found again by the address of the generator they wrap (``_cdata``).
_by_address: Dict[int, Any] = {}


def _register(generator: NpuGenerator) -> None:
    address = generator._cdata
    _by_address[address] = weakref.ref(generator, lambda _: _by_address.pop(address, None))


def npu_generator(generator: Any) -> Optional[NpuGenerator]:
    """The NPU generator ``generator`` (a generator object torch passed on) stands for, if any."""
    if isinstance(generator, NpuGenerator):
        return generator
    ref = _by_address.get(getattr(generator, "_cdata", None))
    return ref() if ref is not None else None


_defaults: List[NpuGenerator] = []
_defaults_lock = threading.Lock()


def default_generators() -> Tuple[NpuGenerator, ...]:
    """Each NPU's default generator, made once (``torch.npu.default_generators``)."""
    if not _defaults:
        with _defaults_lock:
            if not _defaults:
                _defaults.extend(NpuGenerator(i) for i in range(devices.device_count()))
    return tuple(_defaults)


def default(index: int) -> NpuGenerator:
    return default_generators()[index]


# --- torch.Generator(device="npu") --------------------------------------------------------------


class _GeneratorType(type(_TorchGenerator)):  # type: ignore[misc]
    """``torch.Generator`` that makes NPU generators too: every generator is an instance."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is not Generator and cls is not NpuGeneratorOf:
            return super().__call__(*args, **kwargs)
        device = kwargs.get("device", args[0] if args else None)
        index = _npu_of_device(device, ints_are_npus=cls is NpuGeneratorOf)
        if index is None:
            return _TorchGenerator(*args, **kwargs)
        return NpuGenerator(index)

    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is Generator or cls is NpuGeneratorOf:
            return isinstance(obj, _TorchGenerator)
        return super().__instancecheck__(obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        if cls is Generator or cls is NpuGeneratorOf:
            return isinstance(sub, type) and issubclass(sub, _TorchGenerator)
        return super().__subclasscheck__(sub)


def _npu_of_device(device: Any, ints_are_npus: bool) -> Optional[int]:
    if device is None:
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        return devices.check_index(device, "torch.Generator") if ints_are_npus else None
    return devices.npu_index(device, "torch.Generator")


class Generator(_TorchGenerator, metaclass=_GeneratorType):
    """torch.Generator(device='cpu'): torch's generator, or an NPU's for an NPU device."""


class NpuGeneratorOf(_TorchGenerator, metaclass=_GeneratorType):
    """torch_npu 1.x's ``torch_npu._C.Generator(device=None)``: a host generator by default, an
    NPU's for an NPU device or an int (an NPU index)."""


Generator.__module__ = "torch"
Generator.__doc__ = _TorchGenerator.__doc__
NpuGeneratorOf.__module__, NpuGeneratorOf.__qualname__ = "torch_npu._C", "Generator"
NpuGeneratorOf.__name__ = "Generator"


def install() -> None:
    """``torch.Generator`` makes NPU generators too (torch's own class stays ``torch._C``'s)."""
    if torch.Generator is not Generator:
        torch.Generator = Generator  # type: ignore[misc]


# --- draws of the NPU's operations ----------------------------------------------------------------

_ops: Dict[Any, Tuple[bool, Optional[int]]] = {}


def _random_op(func: Any) -> Tuple[bool, Optional[int]]:
    """(whether ``func`` draws random numbers, where its generator argument is: -1 keyword-only,
    an index when positional, None when it has none)."""
    found = _ops.get(func)
    if found is None:
        schema = func._schema
        position: Optional[int] = None
        for i, argument in enumerate(schema.arguments):
            if "Generator" in str(argument.type):
                position = -1 if argument.kwarg_only else i
                break
        tags = getattr(func, "tags", ())
        seeded = (
            getattr(torch, "Tag", None) is not None and torch.Tag.nondeterministic_seeded in tags
        )
        found = _ops[func] = (position is not None or seeded, position)
    return found


def draws(func: Any) -> bool:
    """Whether the emulation must pick the generator of ``func`` (an aten operation) first: it
    draws random numbers, and no draw is being set up already in this thread."""
    if getattr(_local, "drawing", False) or not hasattr(func, "_schema"):
        return False
    return _random_op(func)[0]


class making_on:  # noqa: N801 - used like a function: ``with making_on(npu):``
    """Around a maker whose device is NPU ``index`` (None: not an NPU): its draws are that
    NPU's."""

    __slots__ = ("index", "previous")

    def __init__(self, index: Optional[int]) -> None:
        self.index = index
        self.previous: Optional[int] = None

    def __enter__(self) -> None:
        self.previous = getattr(_local, "making", None)
        _local.making = self.index

    def __exit__(self, *exc: Any) -> None:
        _local.making = self.previous


def _npu_of(args: Any, kwargs: Dict[str, Any]) -> Optional[int]:
    for x in args:
        if isinstance(x, torch.Tensor):
            index = placement.npu_of(x)
            if index is not None:
                return index
        elif isinstance(x, (list, tuple)):
            for y in x:
                index = placement.npu_of(y) if isinstance(y, torch.Tensor) else None
                if index is not None:
                    return index
    for x in kwargs.values():
        if isinstance(x, torch.Tensor):
            index = placement.npu_of(x)
            if index is not None:
                return index
    return getattr(_local, "making", None)


class _Drawing:
    """The thread is setting up a draw (the dispatch it reenters must not do it again)."""

    def __enter__(self) -> None:
        _local.drawing = True

    def __exit__(self, *exc: Any) -> None:
        _local.drawing = False


def draw(
    func: Any,
    args: Tuple[Any, ...],
    kwargs: Dict[str, Any],
    run: Callable[[Tuple[Any, ...], Dict[str, Any]], Any],
) -> Any:
    """Run ``func`` (random, see ``draws``) with ``run(args, kwargs)``, drawing from the NPU's
    generator when it is an NPU operation (or is handed an NPU generator)."""
    _, position = _random_op(func)
    given = None
    if position == -1:
        given = kwargs.get("generator")
    elif position is not None and len(args) > position:
        given = args[position]
    with _Drawing():
        chosen = npu_generator(given) if given is not None else None
        if chosen is not None:
            pass
        elif given is not None:
            return run(args, kwargs)  # a host generator the caller chose
        else:
            index = _npu_of(args, kwargs)
            if index is None:
                return run(args, kwargs)
            chosen = default(index)
        if position == -1:
            return run(args, dict(kwargs, generator=chosen.next_engine()))
        if position is not None and len(args) > position:
            return run(args[:position] + (chosen.next_engine(),) + args[position + 1 :], kwargs)
        return _with_host_generator_as(chosen, lambda: run(args, kwargs))


def _with_host_generator_as(chosen: NpuGenerator, call: Callable[[], Any]) -> Any:
    host = torch.default_generator
    saved = host.get_state()
    host.manual_seed(engine_seed(chosen._seed, chosen._offset))
    chosen._offset += STEP
    try:
        return call()
    finally:
        host.set_state(saved)
