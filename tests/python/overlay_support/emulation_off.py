"""``plain_torch``: a block with the emulator's fp16/bf16 arithmetic off, for tests that build
inputs and references bit by bit (NaN payloads, inf) that the emulation would round.

torch_npu is imported on entry, not here: a test file puts the emulator it wants (with or
without the compiled runtime) on sys.path first."""

from __future__ import annotations


class plain_torch:  # noqa: N801 - used like a function: ``with plain_torch():``
    """The emulation off in this block (for the calling thread), as it was after."""

    def __enter__(self) -> "plain_torch":
        from torch_npu._fp16 import mode as emulation

        self._emulation = emulation
        self._was_enabled = emulation.is_enabled()
        emulation.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._was_enabled:
            self._emulation.enable()
