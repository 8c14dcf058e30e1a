"""What torch_npu reads from the environment as it initialises ACL (the first NPU used):

- ``TORCH_ACL_INIT_CONFIG_PATH``, a JSON file of the user's ACL configuration: a path that does
  not resolve to a file, a file that cannot be read, or one that is not JSON raises, as
  torch_npu's start does. Outside the lazy ``set_device`` mode of CANN 8.3.RC1 and later (the
  emulated NPU has no CANN version, so it is outside), the file must not hold a
  ``defaultDevice`` entry. The emulator runs no ACL, so a valid file changes nothing.
- ``ACL_OP_INIT_MODE`` (how aclops initialise: 0, 1 or 2): another value warns, once, and the
  default (0 here) is taken.
"""

from __future__ import annotations

import json
import os
import warnings

from ..utils._error_code import ErrCode, pta_error

CONFIG = "TORCH_ACL_INIT_CONFIG_PATH"
OP_INIT_MODE = "ACL_OP_INIT_MODE"
DEFAULT_OP_INIT_MODE = 0  # no CANN 8.3.RC1 (where a 910B defaults to 1)


def _leading_int(text: str) -> int:
    """``strtol(text, nullptr, 10)`` as an unsigned 32-bit value: the leading integer, 0 if none."""
    stripped = text.lstrip()
    sign, digits = 1, stripped
    if digits[:1] in ("+", "-"):
        sign, digits = (-1 if digits[0] == "-" else 1), digits[1:]
    count = len(digits) - len(digits.lstrip("0123456789"))
    return (sign * int(digits[:count])) % 2**32 if count else 0


def op_init_mode() -> int:
    text = os.environ.get(OP_INIT_MODE)
    if text is None:
        return DEFAULT_OP_INIT_MODE
    mode = _leading_int(text)
    if mode not in (0, 1, 2):
        warnings.warn(
            f"Get env {OP_INIT_MODE} not in [0, 1, 2], so reset it to the default value "
            f"{DEFAULT_OP_INIT_MODE}."
        )
        return DEFAULT_OP_INIT_MODE
    return mode


def check_config() -> None:
    path = os.environ.get(CONFIG)
    if path is None:
        return
    real = os.path.realpath(path) if path and os.path.exists(path) else ""
    if not real:
        raise RuntimeError(
            f"{CONFIG} {path} is invalid. Please set the environment variable '{CONFIG}' to a "
            "valid JSON config file path." + pta_error(ErrCode.UNAVAIL)
        )
    try:
        with open(real) as f:
            text = f.read()
    except OSError:
        raise RuntimeError(
            f"Failed to open user acl json {real}. Please ensure the file exists and has read "
            "permission." + pta_error(ErrCode.UNAVAIL)
        ) from None
    try:
        config = json.loads(text)
    except ValueError as e:
        raise RuntimeError(
            f"Failed to parse user acl json {real}. Please check that the file contains valid "
            f"JSON syntax. Error: {e}" + pta_error(ErrCode.UNAVAIL)
        ) from None
    if isinstance(config, dict) and "defaultDevice" in config:
        raise RuntimeError(
            f"User acl json {real} contains 'defaultDevice' which is not expected in non-lazy "
            "set_device mode. Please remove the 'defaultDevice' field from your JSON config."
            + pta_error(ErrCode.VALUE)
        )


def start() -> None:
    """The checks of ACL's start, in torch_npu's order."""
    check_config()
    op_init_mode()
