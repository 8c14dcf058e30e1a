"""How long an hccl group waits for its peers: HCCL's two timeout variables, as CANN reads them.

- ``HCCL_CONNECT_TIMEOUT`` bounds the making of a group (the rendezvous and the links between
  the ranks): whole seconds in [120, 7200], 120 by default; HCCL waits 20 s more, to tell every
  rank why the group failed.
- ``HCCL_EXEC_TIMEOUT`` bounds how long a collective waits for its peers: whole seconds,
  1836 by default. On a 910 (the Atlas training series) it is in (0, 17340] and HCCL rounds it
  down to a multiple of 68 s, 68 at least; on a 910B (Atlas A2 and later) it is in
  [0, 2147483647] and 0 means no bound.

An explicit ``timeout=`` (``init_process_group``, ``new_group``, ``ProcessGroupHCCL.Options``)
wins over both, as a timeout given to torch bounds the group on an NPU. ``APEXNPU_HCCL_STRICT=0``
takes the variables as given, in seconds (no range, rounding or margin), so that a test may wait
seconds rather than minutes. A value HCCL would refuse is refused here, naming the variable and
its range.
"""

from __future__ import annotations

import datetime
import os
from typing import NamedTuple, Optional

from .._device import soc

EXEC_VARIABLE = "HCCL_EXEC_TIMEOUT"
CONNECT_VARIABLE = "HCCL_CONNECT_TIMEOUT"
EXEC_DEFAULT = 1836
CONNECT_DEFAULT = 120
CONNECT_RANGE = (120, 7200)
CONNECT_MARGIN = 20  # HCCL's time to tell the other ranks why the group failed
EXEC_STEP_910 = 68  # a 910 counts its wait in steps of 68 s
EXEC_MAX_910 = 17340
EXEC_MAX_910B = 2147483647
# "No bound" (HCCL_EXEC_TIMEOUT=0 on a 910B): a year, which gloo's millisecond clocks still hold.
NO_BOUND = datetime.timedelta(days=365)


class Bound(NamedTuple):
    """A wait's bound and where it came from, for the error that reports it."""

    timeout: datetime.timedelta
    source: str  # "HCCL_EXEC_TIMEOUT=5 s", "timeout=0:00:03 given to init_process_group"


def _seconds(variable: str, text: str, expected: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"{variable}={text!r}: expected whole seconds {expected}") from None


def _relaxed_seconds(variable: str, text: str) -> int:
    value = _seconds(variable, text, "above 0")
    if value <= 0:
        raise ValueError(f"{variable}={text!r}: expected whole seconds above 0")
    return value


def exec_bound(strict: bool) -> Bound:
    """How long a collective of a group made now may wait for its peers (HCCL_EXEC_TIMEOUT)."""
    text = os.environ.get(EXEC_VARIABLE)
    if text is None or not text.strip():
        return Bound(
            datetime.timedelta(seconds=EXEC_DEFAULT),
            f"{EXEC_VARIABLE}'s default of {EXEC_DEFAULT} s",
        )
    if not strict:
        value = _relaxed_seconds(EXEC_VARIABLE, text)
        return Bound(datetime.timedelta(seconds=value), f"{EXEC_VARIABLE}={text.strip()} s")
    if soc.has_bf16():  # a 910B: its HCCL takes any count of seconds, 0 for none
        expected = f"in [0, {EXEC_MAX_910B}] on {soc.name()} (0: no bound)"
        value = _seconds(EXEC_VARIABLE, text, expected)
        if not 0 <= value <= EXEC_MAX_910B:
            raise ValueError(f"{EXEC_VARIABLE}={text!r}: expected whole seconds {expected}")
        if value == 0:
            return Bound(NO_BOUND, f"{EXEC_VARIABLE}=0 (no bound)")
        return Bound(datetime.timedelta(seconds=value), f"{EXEC_VARIABLE}={value} s")
    expected = f"in (0, {EXEC_MAX_910}] on {soc.name()}"
    value = _seconds(EXEC_VARIABLE, text, expected)
    if not 0 < value <= EXEC_MAX_910:
        raise ValueError(f"{EXEC_VARIABLE}={text!r}: expected whole seconds {expected}")
    waited = max(EXEC_STEP_910, value // EXEC_STEP_910 * EXEC_STEP_910)
    return Bound(
        datetime.timedelta(seconds=waited),
        f"{EXEC_VARIABLE}={value} ({waited} s on {soc.name()}, which counts in steps "
        f"of {EXEC_STEP_910} s)",
    )


def connect_bound(strict: bool) -> Bound:
    """How long the making of a group may wait for its peers (HCCL_CONNECT_TIMEOUT)."""
    text = os.environ.get(CONNECT_VARIABLE)
    low, high = CONNECT_RANGE
    if text is None or not text.strip():
        value = CONNECT_DEFAULT
        source = f"{CONNECT_VARIABLE}'s default of {value} s"
    elif not strict:
        value = _relaxed_seconds(CONNECT_VARIABLE, text)
        return Bound(datetime.timedelta(seconds=value), f"{CONNECT_VARIABLE}={value} s")
    else:
        expected = f"in [{low}, {high}]"
        value = _seconds(CONNECT_VARIABLE, text, expected)
        if not low <= value <= high:
            raise ValueError(
                f"{CONNECT_VARIABLE}={text!r}: expected whole seconds {expected} "
                "(APEXNPU_HCCL_STRICT=0 takes any count of seconds on the emulator)"
            )
        source = f"{CONNECT_VARIABLE}={value}"
    waited = value + CONNECT_MARGIN
    return Bound(
        datetime.timedelta(seconds=waited),
        f"{source} (+{CONNECT_MARGIN} s, as HCCL waits: {waited} s)",
    )


def given(timeout: Optional[datetime.timedelta], where: str) -> Bound:
    """A timeout a script gave (``where``: to what), which wins over HCCL's variables."""
    assert timeout is not None
    return Bound(timeout, f"timeout={timeout} given to {where}")


def is_timeout(error: BaseException) -> bool:
    """Whether a gloo or store error says a wait ran out (their types vary with torch)."""
    if isinstance(error, TimeoutError):
        return True
    text = str(error).lower()
    return "timed out" in text or "timeout" in text
