"""``torch.npu.random``: the random-number functions of the emulated NPUs.

Every emulated NPU draws from the CPU generator, so each NPU's generator in
``default_generators`` is ``torch.default_generator`` and each NPU's state is the CPU state: a
script that saves, forks and restores NPU states (Megatron-style model-parallel RNG trackers do)
gets back the numbers it would on one NPU.
"""
from __future__ import annotations

from typing import Any, List, Tuple

import torch

from .._device import devices

__all__ = ["get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def default_generators() -> Tuple[torch.Generator, ...]:
    """One generator per NPU, as ``torch.npu.default_generators`` holds them."""
    return (torch.default_generator,) * devices.device_count()


def manual_seed(seed: int) -> None:
    # The CPU generator itself: torch.manual_seed calls torch.cuda.manual_seed_all, which
    # transfer_to_npu points here.
    torch.default_generator.manual_seed(int(seed))


manual_seed_all = manual_seed


def seed() -> None:
    torch.default_generator.seed()


seed_all = seed


def initial_seed() -> int:
    return torch.initial_seed()


def get_rng_state(device: Any = "npu") -> torch.Tensor:
    devices.index_of(device, "torch.npu.get_rng_state")
    return torch.get_rng_state()


def set_rng_state(new_state: torch.Tensor, device: Any = "npu") -> None:
    devices.index_of(device, "torch.npu.set_rng_state")
    torch.set_rng_state(new_state)


def get_rng_state_all() -> List[torch.Tensor]:
    return [torch.get_rng_state() for _ in range(devices.device_count())]


def set_rng_state_all(new_states: List[torch.Tensor]) -> None:
    for state in new_states:
        torch.set_rng_state(state)
