"""``torch.npu.random``: the random-number functions of the emulated NPUs.

Every NPU has its own default generator (``default_generators``), apart from the host's, as in
torch_npu: ``torch.npu.manual_seed`` seeds the current NPU's and leaves the host's alone, and
``torch.manual_seed`` seeds the host and every NPU. States are torch_npu's 16 bytes (seed,
offset), so NPU states saved on a real NPU load here and the other way round; a script that
saves, forks and restores NPU states (Megatron-style model-parallel RNG trackers do) gets back
its numbers. See ``_device.generators`` for how the numbers are drawn.
"""

from __future__ import annotations

from typing import Any, Iterable, List

import torch

from .._device import devices, generators

__all__ = [
    "get_rng_state",
    "set_rng_state",
    "get_rng_state_all",
    "set_rng_state_all",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
]


def default_generators() -> tuple:
    """One generator per NPU, as ``torch.npu.default_generators`` holds them."""
    return generators.default_generators()


def _generator(device: Any) -> generators.NpuGenerator:
    index = devices.get_device_index(device, optional=True)
    return generators.default(devices.check_index(index, "torch.npu.random"))


def get_rng_state(device: Any = "npu") -> torch.Tensor:
    """NPU ``device``'s generator state (a ByteTensor)."""
    devices.lazy_init()
    return _generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: Any = "npu") -> None:
    _generator(device).set_state(new_state.clone(memory_format=torch.contiguous_format))


def get_rng_state_all() -> List[torch.Tensor]:
    return [get_rng_state(i) for i in range(devices.device_count())]


def set_rng_state_all(new_states: Iterable[torch.Tensor]) -> None:
    for index, state in enumerate(new_states):
        set_rng_state(state, index)


def manual_seed(seed: Any) -> None:
    """Seed the current NPU's generator (the host's and the other NPUs' are left alone)."""
    generators.default(devices.current_device()).manual_seed(int(seed))


def manual_seed_all(seed: Any) -> None:
    seed = int(seed)
    for generator in generators.default_generators():
        generator.manual_seed(seed)


def seed() -> None:
    """Seed the current NPU's generator with a nondeterministic number."""
    generators.default(devices.current_device()).seed()


def seed_all() -> None:
    first = generators.default_generators()[0].seed()
    for generator in generators.default_generators()[1:]:
        generator.manual_seed(first)


def initial_seed() -> int:
    devices.lazy_init()
    return generators.default(devices.current_device()).initial_seed()


def install_seeding_of_torch() -> None:
    """torch 1.x seeds no NPU itself: as torch_npu 1.x, ``torch.manual_seed`` and ``torch.seed``
    seed every NPU too (torch 2.x calls ``torch.npu.manual_seed_all`` on its own)."""
    if devices.NATIVE_TYPE == "npu" or getattr(torch.manual_seed, "_apexnpu_seeds_npus", False):
        return
    torch_manual_seed, torch_seed = torch.random.manual_seed, torch.random.seed

    def seeding_manual_seed(seed: Any) -> torch.Generator:
        seed = int(seed)
        if not devices.in_bad_fork():
            manual_seed_all(seed)
        return torch_manual_seed(seed)

    def seeding_seed() -> int:
        value = torch_seed()
        if not devices.in_bad_fork():
            manual_seed_all(value)
        return value

    for fn, original in ((seeding_manual_seed, torch_manual_seed), (seeding_seed, torch_seed)):
        fn.__doc__ = original.__doc__
        fn._apexnpu_seeds_npus = True  # type: ignore[attr-defined]
    torch.manual_seed = torch.random.manual_seed = seeding_manual_seed
    torch.seed = torch.random.seed = seeding_seed
