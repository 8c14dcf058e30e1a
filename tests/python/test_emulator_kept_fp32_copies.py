"""Kept fp32 copies (``torch_npu._fp16.fp32_copies.keep`` / ``kept_or_new``): a tensor its owner
keeps is widened once and its one copy handed out again while it is the same object with the
same ``_version`` and memory; a change autograd sees, or new memory behind it, makes a new copy.
Each copy holds the exact values of ``x.float()`` (torch's own conversion, bit for bit: every
fp16 and bf16 value, NaN payloads and infinities included, an odd number of them), on both
kernel paths (torch operations and the runtime's one-pass widening). Autocast keeps its cached
casts of weights for the region and forgets them when the outermost region ends.
"""

import pytest
import torch

from overlay_support import use_overlay
from overlay_support.emulation_off import plain_torch

use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch_npu._fp16 import fp32_copies  # noqa: E402
from torch_npu.npu.amp import autocast_mode  # noqa: E402
from overlay_support.npu_op_checks import emulated_chip  # noqa: E402

pytestmark = pytest.mark.usefixtures("kernel_path")

CHIPS = {torch.float16: "Ascend910A", torch.bfloat16: "Ascend910B1"}


@pytest.fixture(params=[torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def dtype(request):
    """The dtype, on a chip that has it."""
    with emulated_chip(CHIPS[request.param], inf_nan=request.param == torch.bfloat16):
        yield request.param


def every_value(dtype: torch.dtype, count: int = 65536 + 3) -> torch.Tensor:
    """The first ``count`` of every fp16 or bf16 bit pattern and three more (not a multiple of
    any vector width), on the NPU."""
    with plain_torch():
        bits = torch.arange(-32768, 32768 + 3, dtype=torch.int32).to(torch.int16)
        return bits[:count].view(dtype).npu()


def same_bits(got: torch.Tensor, source: torch.Tensor) -> bool:
    """``got`` holds the bits of torch's own ``source.float()``."""
    with plain_torch():
        want = source.detach().cpu().float()
        return got.dtype == torch.float32 and torch.equal(
            got.detach().cpu().view(torch.int32), want.view(torch.int32)
        )


def test_a_kept_tensor_is_widened_once_while_unchanged(dtype):
    x = every_value(dtype)
    fp32_copies.keep(x)
    try:
        first = fp32_copies.kept_or_new(x)
        assert same_bits(first, x)
        assert fp32_copies.kept_or_new(x) is first
    finally:
        fp32_copies.forget(x)
    again = fp32_copies.kept_or_new(x)
    assert again is not first and same_bits(again, x)


def test_a_tensor_not_kept_gets_a_new_copy_each_time(dtype):
    x = every_value(dtype)
    first, second = fp32_copies.kept_or_new(x), fp32_copies.kept_or_new(x)
    assert first is not second
    assert same_bits(first, x) and same_bits(second, x)


def test_a_change_autograd_sees_makes_a_new_copy(dtype):
    x = every_value(dtype, 1000)
    fp32_copies.keep(x)
    try:
        first = fp32_copies.kept_or_new(x)
        with plain_torch():
            x.copy_(torch.arange(1000, dtype=torch.float32).to(dtype).npu())
        changed = fp32_copies.kept_or_new(x)
        assert changed is not first and same_bits(changed, x)
        assert changed[199].item() == 199.0 and first[199].item() != 199.0
    finally:
        fp32_copies.forget(x)


def test_new_memory_behind_the_tensor_makes_a_new_copy(dtype):
    """``.data =`` leaves the version counter alone; the copy follows the memory."""
    x = every_value(dtype, 64)
    fp32_copies.keep(x)
    try:
        first = fp32_copies.kept_or_new(x)
        with plain_torch():
            x.data = torch.full((64,), 2.0, dtype=dtype).npu()
        changed = fp32_copies.kept_or_new(x)
        assert changed is not first and same_bits(changed, x)
        assert changed.eq(2.0).all()
    finally:
        fp32_copies.forget(x)


def test_a_view_that_is_not_dense_is_copied_exactly(dtype):
    x = every_value(dtype)[:-3].view(256, 256)[::3, 1::2]
    fp32_copies.keep(x)
    try:
        first = fp32_copies.kept_or_new(x)
        assert same_bits(first, x) and fp32_copies.kept_or_new(x) is first
    finally:
        fp32_copies.forget(x)


def test_fp32_tensors_are_not_kept():
    x = torch.randn(5).npu()
    fp32_copies.keep(x)
    assert id(x) not in fp32_copies._kept.copies


def test_autocast_keeps_its_weight_casts_for_the_region(chip910b):
    weight = torch.nn.Parameter(torch.randn(7, 5).npu())
    with torch.autocast("npu", dtype=torch.bfloat16):
        torch.nn.functional.linear(torch.randn(3, 5).npu(), weight)
        with torch.autocast("npu", dtype=torch.bfloat16):  # an inner region ends: kept
            torch.nn.functional.linear(torch.randn(3, 5).npu(), weight)
        (cast,) = [c for _, c in autocast_mode._regions.cache.values()]
        first = fp32_copies.kept_or_new(cast)
        assert fp32_copies.kept_or_new(cast) is first and same_bits(first, cast)
    assert fp32_copies.kept_or_new(cast) is not first  # forgotten with the outermost region
    assert not fp32_copies._kept.copies
