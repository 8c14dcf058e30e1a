"""The fast path of the fp16 emulation against the general path (APEXNPU_EMULATION_PATH): on a
corpus of operations and shapes, with overflow, saturation, NaN and inf among the values, both
give the same bits (outputs, in-place results, dtypes, strides, NPU placement) and the same float
status. The general path is today's emulation, so equality is exact, never a tolerance. Each case
runs on both kernel paths (torch operations and the runtime's kernels)."""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from overlay_support import use_overlay
from overlay_support.emulation_off import plain_torch

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch_npu._device import placement  # noqa: E402
from torch_npu._fp16 import float_status  # noqa: E402
from torch_npu._fp16 import path as emulation_path  # noqa: E402

aten = torch.ops.aten
INT_OF = {torch.float16: torch.int16, torch.float32: torch.int32, torch.float64: torch.int64}


pytestmark = pytest.mark.usefixtures("kernel_path")  # conftest.py: each case both ways


def values(*shape, seed=0, scale=1.0, specials=False, dtype=torch.float16, npu=False):
    """Random values (made with the emulation off); ``specials`` puts inf, -inf, NaN, +-65504,
    a subnormal and -0.0 at the first positions."""
    with plain_torch():
        g = torch.Generator().manual_seed(seed)
        x = (torch.randn(shape, generator=g) * scale).to(dtype)
        if specials:
            flat = x.view(-1)
            picks = [math.inf, -math.inf, math.nan, 65504.0, -65504.0, 6e-8, -0.0]
            for i, v in enumerate(picks[: flat.numel()]):
                flat[i] = v
    return placement.put(x, 0) if npu else x


def same(a, b):
    """Exact equality: type, dtype, sizes, strides, NPU placement and bits (NaN payloads too)."""
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if not isinstance(a, torch.Tensor):
        return type(a) is type(b) and (a == b or (a != a and b != b))
    if not isinstance(b, torch.Tensor):
        return False
    if (a.dtype, a.shape, a.stride(), placement.npu_of(a)) != (
        b.dtype,
        b.shape,
        b.stride(),
        placement.npu_of(b),
    ):
        return False
    with plain_torch():
        if a.dtype in INT_OF:
            return torch.equal(a.view(INT_OF[a.dtype]), b.view(INT_OF[b.dtype]))
        return torch.equal(a, b)


def run(path, fn, make):
    """(result, inputs after the call, float status, which input the result is, if any)."""
    with plain_torch():
        inputs = make()
    float_status.clear()
    with emulation_path.using(path):
        torch.manual_seed(1234)
        out = fn(*inputs)
    status = float_status.get()
    float_status.clear()
    which = [i for i, x in enumerate(inputs) if out is x]
    return out, inputs, status, which


def assert_paths_agree(fn, make, repeats=2):
    """General once, fast ``repeats`` times (the second run meets the fast path's caches)."""
    want = run("general", fn, make)
    for _ in range(repeats):
        got = run("fast", fn, make)
        assert got[2] == want[2], f"float status: fast {got[2]}, general {want[2]}"
        assert got[3] == want[3], "the result is a different argument"
        assert same(got[0], want[0]), (got[0], want[0])
        assert same(got[1], want[1]), "in-place results differ"
    return want


def h(*shape, **kw):
    return lambda: [values(*shape, **kw)]


# Each case: (function of the inputs, maker of the inputs). Inputs are fresh for every run.
OPS = {
    # arithmetic, with overflow: 300 * 300, 65504 + 16 (IEEE would round to inf), NaN, inf
    "add": (torch.add, lambda: [values(5, 7, specials=True), values(5, 7, seed=1)]),
    "add_overflow": (torch.add, lambda: [values(4, scale=0) + 65504, values(4, scale=0) + 16]),
    "add_just_above_max": (torch.add, lambda: [values(4, scale=0) + 65504, values(4, scale=0) + 8]),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=0.3), lambda: [values(9), values(9, seed=1)]),
    "sub_broadcast": (torch.sub, lambda: [values(4, 1, 3), values(5, 1, seed=1)]),
    "mul_overflow": (torch.mul, lambda: [values(6, scale=0) + 300, values(6, scale=0) + 300]),
    "mul_scalar": (lambda a: a * 1000.0, h(3, 4, scale=100)),
    "mul_scalar_specials": (lambda a: a * -7, h(3, 5, specials=True)),
    "mul_scalar_inplace": (lambda a: a.mul_(0.1), h(3, 5, specials=True)),
    "mul_scalar_just_above_max": (lambda a: a * 1.0001, lambda: [values(4, scale=0) + 65504]),
    "mul_scalar_big_int": (lambda a: a * (2**25 + 1), h(3, 4, scale=1e-6)),  # the round trip
    "mul_scalar_bool": (lambda a: a * True, h(3, 4, specials=True)),  # the round trip
    "div_scalar": (lambda a: a / 4.0, h(3, 5, specials=True)),
    "div_scalar_rounds": (lambda a: a / 3.0, h(4, 9, scale=1e3, specials=True)),
    "div_int": (lambda a: torch.div(a, 128), h(3, 5, specials=True)),
    "div_scalar_inplace": (lambda a: a.div_(1e-3), h(3, 5, scale=100)),
    "div_scalar_zero": (lambda a: a / 0.0, h(3, 5, specials=True)),
    "div_scalar_0dim": (lambda a: a / 2.5, h()),
    "div_scalar_beyond_fp32": (lambda a: a / 1e300, h(3, 5, specials=True)),  # the round trip
    "div_scalar_nan": (lambda a: a / math.nan, h(3, 5)),  # the round trip
    "div_scalar_transposed": (lambda a: a.t() / 2.0, h(3, 5, specials=True)),  # the round trip
    "div_by_zero": (torch.div, lambda: [values(6), values(6, scale=0)]),
    "mixed_fp16_fp32": (torch.add, lambda: [values(3, 3), values(3, 3, dtype=torch.float32)]),
    "fp16_and_0dim_fp32": (torch.mul, lambda: [values(3, 3), torch.tensor(2.5)]),
    "0dim_fp16": (torch.mul, lambda: [values(), values(4, seed=1)]),
    "add_inplace": (
        lambda a, b: a.add_(b),
        lambda: [values(4, 5), values(4, 5, seed=1, scale=1e4)],
    ),
    "add_inplace_specials": (
        lambda a, b: a.add_(b),
        lambda: [values(4, 5, specials=True), values(4, 5, seed=1, specials=True)],
    ),
    "add_inplace_itself": (lambda a: a.add_(a), h(4, 5, specials=True, scale=4e4)),
    "add_inplace_overlapping": (lambda a: a[1:].add_(a[:-1]), h(600, scale=3e4)),
    "add_alpha_one": (
        lambda a, b: torch.add(a, b, alpha=1),
        lambda: [values(9, specials=True), values(9, seed=1)],
    ),
    "add_0dim_fp16": (torch.add, lambda: [values(4, 5), values(seed=1)]),
    "add_transposed": (lambda a, b: a.t() + b.t(), lambda: [values(4, 5), values(4, 5, seed=1)]),
    "add_inplace_fp32_other": (
        lambda a, b: a.add_(b),
        lambda: [values(4, 5), values(5, dtype=torch.float32)],
    ),
    "mul_inplace_view": (lambda a: a[:, 1:3].mul_(7e3), h(4, 5, scale=10)),
    "add_out": (
        lambda a, b, c: torch.add(a, b, out=c),
        lambda: [values(3, 4), values(3, 4, seed=1), values(0)],
    ),
    "add_out_self": (
        lambda a, b: torch.add(a, b, out=a),
        lambda: [values(3, 4), values(3, 4, seed=1)],
    ),
    "addcmul_inplace": (
        lambda a, b, c: a.addcmul_(b, c, value=0.5),
        lambda: [values(8), values(8, seed=1), values(8, seed=2)],
    ),
    # writes that read nothing of the destination
    "zero_": (lambda a: a.zero_(), h(6, 5, specials=True)),
    "zero_strided": (lambda a: a[::2].zero_(), h(6, 5, specials=True)),
    "fill_": (lambda a: a.fill_(2.7182818), h(3, 3)),
    "fill_overflow": (lambda a: a.fill_(1e5), h(3, 3)),
    "fill_nan": (lambda a: a.fill_(float("nan")), h(3, 3)),
    "fill_empty_overflow": (lambda a: a.fill_(1e5), h(0, 3)),
    "copy_fp32_into_fp16": (
        lambda a, b: a.copy_(b),
        lambda: [values(4, 5), values(4, 5, dtype=torch.float32, scale=3e4, specials=True)],
    ),
    "copy_fp16_into_fp16": (
        lambda a, b: a.copy_(b),
        lambda: [values(4, 5), values(4, 5, seed=1, specials=True)],
    ),
    "copy_broadcast": (
        lambda a, b: a.copy_(b),
        lambda: [values(4, 5), values(5, dtype=torch.float32, scale=1e5)],
    ),
    "copy_into_transposed": (
        lambda a, b: a.t().copy_(b),
        lambda: [values(4, 5), values(5, 4, dtype=torch.float32)],
    ),
    "copy_fp16_into_fp32": (
        lambda a, b: a.copy_(b),
        lambda: [values(4, 5, dtype=torch.float32), values(4, 5, specials=True)],
    ),
    "masked_fill_big": (
        lambda a, m: a.masked_fill(m, -1e9),
        lambda: [values(4, 4), values(4, 4, seed=1) > 0],
    ),
    "masked_fill_none_selected": (
        lambda a, m: a.masked_fill(m, -1e9),
        lambda: [values(4, 4), values(4, 4) > 1e9],
    ),
    "masked_fill_broadcast": (
        lambda a, m: a.masked_fill(m, -1e4),
        lambda: [values(2, 3, 4, 4, specials=True), values(4, 4, seed=1) > 0],
    ),
    "masked_fill_rounded_value": (
        lambda a, m: a.masked_fill(m, 0.1),
        lambda: [values(3, 5, specials=True), values(3, 5, seed=1) > 0],
    ),
    "masked_fill_int_value": (
        lambda a, m: a.masked_fill(m, 7),
        lambda: [values(3, 5), values(5, seed=1) > 0],
    ),
    "masked_fill_max_in_fp32": (
        lambda a, m: a.masked_fill(m, 65504.00001),
        lambda: [values(3, 5), values(3, 5, seed=1) > 0],
    ),
    "masked_fill_above_max": (
        lambda a, m: a.masked_fill(m, 65510.0),
        lambda: [values(3, 5), values(3, 5, seed=1) > 0],
    ),
    "masked_fill_nan": (
        lambda a, m: a.masked_fill(m, float("nan")),
        lambda: [values(3, 5), values(3, 5, seed=1) > 0],
    ),
    "masked_fill_transposed": (
        lambda a, m: a.t().masked_fill(m, -3.0),
        lambda: [values(5, 3, specials=True), values(3, 5, seed=1) > 0],
    ),
    # masks repeating along the input (one runtime pass), and broadcasts that do not (torch's kernel)
    "masked_fill_causal_leading_ones": (
        lambda a, m: a.masked_fill(m, -1e4),
        lambda: [values(2, 3, 4, 4, specials=True), (values(1, 1, 4, 4) > -9).triu(1)],
    ),
    "masked_fill_last_dim": (
        lambda a, m: a.masked_fill(m, 2.5),
        lambda: [values(3, 4, specials=True), values(4, seed=1) > 0],
    ),
    "masked_fill_across_chunks": (
        lambda a, m: a.masked_fill(m, -0.1),
        lambda: [values(3, 40001, specials=True), values(40001, seed=1) > 0],
    ),
    "masked_fill_middle_broadcast": (
        lambda a, m: a.masked_fill(m, -2.0),
        lambda: [values(2, 3, 4, specials=True), values(2, 1, 4, seed=1) > 0],
    ),
    "masked_fill_mask_transposed": (
        lambda a, m: a.masked_fill(m.t(), 3.0),
        lambda: [values(3, 5, specials=True), values(5, 3, seed=1) > 0],
    ),
    "masked_fill_inplace_causal": (
        lambda a, m: a.masked_fill_(m, -65504.0),
        lambda: [values(2, 4, 4, specials=True), (values(4, 4) > -9).triu(1)],
    ),
    "where": (
        torch.where,
        lambda: [values(4, 4) > 0, values(4, 4, specials=True), values(4, 4, seed=1)],
    ),
    # data movement
    "clone": (lambda a: a.clone(), h(5, 3, specials=True)),
    "clone_channels_last": (
        lambda a: a.clone(memory_format=torch.channels_last),
        h(2, 3, 4, 4, specials=True),
    ),
    "clone_transposed": (lambda a: a.t().clone(), h(5, 3, specials=True)),
    "unsafe_view": (lambda a: aten._unsafe_view(a, [3, -1]), h(2, 3, 4, specials=True)),
    "copy_overlapping": (lambda a: a[1:].copy_(a[:-1]), h(600, specials=True)),
    "copy_itself": (lambda a: a.copy_(a), h(9, specials=True)),
    "cat_strided": (
        lambda a, b: torch.cat([a.t(), b]),
        lambda: [values(3, 3, specials=True), values(2, 3, seed=1)],
    ),
    "cat_channels_last": (
        lambda a, b: torch.cat([a, b], 1),
        lambda: [
            values(2, 3, 4, 4, specials=True).contiguous(memory_format=torch.channels_last),
            values(2, 2, 4, 4, seed=1).contiguous(memory_format=torch.channels_last),
        ],
    ),
    "cat_with_empty": (
        lambda a, b: torch.cat([a, b]),
        lambda: [values(0), values(4, seed=1, specials=True)],
    ),
    "cat_out": (
        lambda a, b, c: torch.cat([a, b], out=c),
        lambda: [values(2, specials=True), values(3, seed=1), values(0)],
    ),
    "contiguous": (lambda a: a.transpose(0, 1).contiguous(), h(2, 3, 4, specials=True)),
    "reshape_copy": (lambda a: a.transpose(1, 2).reshape(2, -1), h(2, 3, 4, specials=True)),
    "cat": (
        lambda a, b: torch.cat([a, b], 1),
        lambda: [values(3, 2, specials=True), values(3, 4, seed=1)],
    ),
    "cat_mixed": (
        lambda a, b: torch.cat([a, b]),
        lambda: [values(2, 3), values(2, 3, dtype=torch.float32)],
    ),
    "stack": (lambda a, b: torch.stack([a, b]), lambda: [values(3, 2), values(3, 2, seed=1)]),
    "index_select": (lambda a: a.index_select(0, torch.tensor([2, 0, 2])), h(3, 4, specials=True)),
    "gather": (lambda a: a.gather(1, torch.tensor([[0, 0], [1, 0]])), h(2, 3, specials=True)),
    "embedding": (lambda w: F.embedding(torch.tensor([[1, 3], [0, 1]]), w), h(4, 6, specials=True)),
    "to_fp32": (lambda a: a.float(), h(3, 5, specials=True)),
    "to_fp32_channels_last": (
        lambda a: a.to(torch.float32),
        lambda: [values(2, 3, 4, 4).contiguous(memory_format=torch.channels_last)],
    ),
    "to_fp16": (
        lambda a: a.half(),
        lambda: [values(3, 5, dtype=torch.float32, scale=5e4, specials=True)],
    ),
    "to_fp16_strided": (
        lambda a: a[:, ::2].half(),
        lambda: [values(3, 6, dtype=torch.float32, scale=5e4)],
    ),
    "to_fp16_from_fp16": (lambda a: a.to(torch.float16, copy=True), h(3, 5, specials=True)),
    "to_fp16_from_fp16_strided": (
        lambda a: a[:, ::2].to(torch.float16, copy=True),
        h(3, 6, specials=True),
    ),
    "to_fp32_strided": (lambda a: a[:, ::2].float(), h(3, 6, specials=True)),
    "to_fp32_empty": (lambda a: a.float(), h(0, 2)),
    "to_fp16_empty": (lambda a: a.half(), lambda: [values(2, 0, dtype=torch.float32)]),
    "to_fp32_memory_format": (
        lambda a: a.to(torch.float32, memory_format=torch.channels_last),
        h(2, 3, 2, 2),
    ),
    # as autograd casts back in .float()'s backward: layout and the host device named
    "to_fp16_layout_device": (
        lambda a: aten._to_copy(
            a, dtype=torch.float16, layout=torch.strided, device=torch.device("cpu")
        ),
        lambda: [values(3, 5, dtype=torch.float32, scale=5e4, specials=True)],
    ),
    "to_fp32_layout_device": (
        lambda a: aten._to_copy(a, dtype=torch.float32, layout=torch.strided, device="cpu"),
        h(3, 5, specials=True),
    ),
    "to_fp16_pinned": (
        lambda a: aten._to_copy(a, dtype=torch.float16, pin_memory=False),
        lambda: [values(3, 5, dtype=torch.float32, scale=5e4)],
    ),
    "zeros_like": (torch.zeros_like, h(2, 3)),
    "ones_half": (lambda: torch.ones(2, 3, dtype=torch.float16), lambda: []),
    "full_overflow": (lambda: torch.full((2,), 7e4, dtype=torch.float16), lambda: []),
    # reductions, norms and activations
    "sum": (lambda a: a.sum(), h(50, 40, scale=100)),
    "sum_dim_fp32": (lambda a: a.sum(1, dtype=torch.float32), h(5, 40, scale=100)),
    "mean_dim": (lambda a: a.mean((0, 2), keepdim=True), h(3, 4, 5)),
    "max_dim": (lambda a: a.max(1), h(4, 6, specials=True)),
    "topk": (lambda a: a.topk(2), h(3, 5)),
    "norm": (lambda a: a.norm(), h(40, 40, scale=100)),
    "softmax": (lambda a: F.softmax(a, -1), h(4, 9, specials=True)),
    "log_softmax": (lambda a: F.log_softmax(a, 1), h(4, 9)),
    "layer_norm": (
        lambda a, w, b: F.layer_norm(a, (9,), w, b),
        lambda: [values(4, 9), values(9, seed=1), values(9, seed=2)],
    ),
    "gelu": (F.gelu, h(4, 9, scale=3, specials=True)),
    "relu": (F.relu, h(4, 9, specials=True)),
    "relu_inplace": (lambda a: F.relu(a, inplace=True), h(4, 9, specials=True)),
    "relu_transposed": (lambda a: F.relu(a.t()), h(4, 9, specials=True)),
    "relu_empty": (F.relu, h(0, 3)),
    "relu_backward": (
        lambda g, s: aten.threshold_backward(g, s, 0),
        lambda: [values(5, 7, specials=True, scale=1e5), values(5, 7, seed=1, specials=True)],
    ),
    "relu_backward_float_zero": (
        lambda g, s: aten.threshold_backward(g, s, 0.0),
        lambda: [values(5, 7, specials=True), values(5, 7, seed=1)],
    ),
    "threshold_backward_nonzero": (
        lambda g, s: aten.threshold_backward(g, s, 0.5),
        lambda: [values(5, 7, specials=True), values(5, 7, seed=1)],
    ),
    "relu_backward_broadcast": (
        lambda g, s: aten.threshold_backward(g, s, 0),
        lambda: [values(5, 7, specials=True), values(7, seed=1)],
    ),
    "relu_backward_fp32_grad": (
        lambda g, s: aten.threshold_backward(g, s, 0),
        lambda: [values(5, 7, dtype=torch.float32, scale=1e5), values(5, 7, seed=1)],
    ),
    "relu_backward_strided": (
        lambda g, s: aten.threshold_backward(g[:, ::2], s[:, ::2], 0),
        lambda: [values(5, 8, specials=True), values(5, 8, seed=1, specials=True)],
    ),
    "sigmoid": (torch.sigmoid, h(4, 9)),
    "tanh": (torch.tanh, h(4, 9)),
    "exp_overflow": (torch.exp, h(4, 9, scale=8)),
    "clamp": (lambda a: a.clamp(-1, 1), h(4, 9, specials=True)),
    "dropout": (lambda a: F.dropout(a, 0.3), h(6, 7)),
    "cross_entropy": (lambda a: F.cross_entropy(a, torch.tensor([0, 3, 8, 1])), h(4, 9)),
    # matrix products and convolutions, with transposed and channels-last operands
    "mm": (lambda a, b: a @ b, lambda: [values(5, 7), values(7, 3, seed=1)]),
    "mm_transposed": (lambda a, b: a.t() @ b.t(), lambda: [values(7, 5), values(3, 7, seed=1)]),
    "mm_overflow": (lambda a: a @ a, lambda: [values(2, 2, scale=0) + 300]),
    "addmm": (torch.addmm, lambda: [values(5, 3), values(5, 7, seed=1), values(7, 3, seed=2)]),
    "bmm": (torch.bmm, lambda: [values(2, 4, 5), values(2, 5, 3, seed=1)]),
    "linear": (F.linear, lambda: [values(4, 6), values(3, 6, seed=1), values(3, seed=2)]),
    "conv2d": (
        lambda x, w: F.conv2d(x, w, padding=1),
        lambda: [values(2, 3, 6, 6), values(4, 3, 3, 3, seed=1)],
    ),
    "conv2d_channels_last": (
        lambda x, w: F.conv2d(x, w),
        lambda: [
            values(2, 3, 6, 6).contiguous(memory_format=torch.channels_last),
            values(4, 3, 1, 1, seed=1),
        ],
    ),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), h(2, 3, 6, 6, specials=True)),
    "max_pool2d_3d_input": (lambda x: F.max_pool2d(x, 2), h(3, 6, 6, specials=True)),
    "max_pool2d_one_channel": (lambda x: F.max_pool2d(x, 2), h(2, 1, 6, 6, specials=True)),
    "max_pool2d_channels_last": (
        lambda x: F.max_pool2d(x, 2),
        lambda: [values(2, 3, 6, 6, specials=True).contiguous(memory_format=torch.channels_last)],
    ),
    "max_pool2d_backward": (
        lambda x, g: aten.max_pool2d_with_indices_backward(
            g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, aten.max_pool2d_with_indices(x, [2, 2])[1]
        ),
        lambda: [values(2, 3, 6, 6, specials=True), values(2, 3, 3, 3, seed=1, specials=True)],
    ),
    "max_pool2d_backward_overlapping": (
        lambda x, g: aten.max_pool2d_with_indices_backward(
            g,
            x,
            [3, 3],
            [1, 1],
            [1, 1],
            [1, 1],
            False,
            aten.max_pool2d_with_indices(x, [3, 3], [1, 1], [1, 1])[1],
        ),
        lambda: [values(1, 2, 5, 5), values(1, 2, 5, 5, seed=1, scale=3e4)],
    ),
    "max_pool2d_backward_channels_last": (
        lambda x, g: aten.max_pool2d_with_indices_backward(
            g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, aten.max_pool2d_with_indices(x, [2, 2])[1]
        ),
        lambda: [
            values(2, 3, 6, 6).contiguous(memory_format=torch.channels_last),
            values(2, 3, 3, 3, seed=1).contiguous(memory_format=torch.channels_last),
        ],
    ),
    "batch_norm_fp32_params": (
        lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=True),
        lambda: [values(4, 3, 5, 5), torch.zeros(3), torch.ones(3), torch.ones(3), torch.zeros(3)],
    ),
    # placement: outputs of NPU inputs are on that NPU
    "npu_add": (torch.add, lambda: [values(3, 4, npu=True), values(3, 4, seed=1, npu=True)]),
    "npu_inplace": (lambda a: a.mul_(2), h(3, 4, npu=True)),
    "npu_max_dim": (lambda a: a.max(0), h(3, 4, npu=True)),
    # several tensors written by one op
    "foreach_mul": (
        lambda a, b: torch._foreach_mul([a, b], 3.0),
        lambda: [values(3), values(2, 2)],
    ),
    "contiguous_of_a_slice": (lambda a: a[:, 1::2].contiguous(), h(4, 6, specials=True)),
}
if hasattr(torch, "_foreach_copy_"):  # torch 2.1 and later (amp's master-to-model copy)
    OPS.update(
        {
            "foreach_copy_fp32_into_fp16": (
                lambda a, b, c, d: torch._foreach_copy_([a, b], [c, d]),
                lambda: [
                    values(4, 5),
                    values(3),
                    values(4, 5, dtype=torch.float32, scale=3e4, specials=True),
                    values(3, dtype=torch.float32, seed=1, scale=1e5),
                ],
            ),
            "foreach_copy_fp16_into_fp16": (
                lambda a, b, c, d: torch._foreach_copy_([a, b], [c, d]),
                lambda: [
                    values(4, 5),
                    values(4, 5, seed=1),
                    values(4, 5, seed=2, specials=True),
                    values(4, 5, seed=3, specials=True),
                ],
            ),
            "foreach_copy_reads_what_another_writes": (  # the round trip: sources read first
                lambda a, b, c: torch._foreach_copy_([a, b], [c, a]),
                lambda: [values(4, 5), values(4, 5, seed=1), values(4, 5, seed=2, specials=True)],
            ),
            "foreach_copy_one_broadcast": (  # one pair the kernels do not take: all go the round trip
                lambda a, b, c, d: torch._foreach_copy_([a, b], [c, d]),
                lambda: [
                    values(4, 5),
                    values(3, 2),
                    values(4, 5, dtype=torch.float32, scale=1e5),
                    values(2, dtype=torch.float32, seed=1),
                ],
            ),
        }
    )


@pytest.mark.parametrize("name", sorted(OPS))
def test_fast_path_gives_the_general_path_bits_and_status(name):
    fn, make = OPS[name]
    assert_paths_agree(fn, make)


@pytest.mark.parametrize("path", emulation_path.PATHS)
def test_unsafe_view_is_a_view_on_both_paths_as_on_the_npu(path):
    """reshape's and matmul's ``_unsafe_view`` returns its input's memory: nothing is copied,
    nothing stored, so inf and NaN stay and the float status stays clear."""
    out, (x,), status, _ = run(
        path, lambda a: aten._unsafe_view(a, [3, -1]), h(2, 3, 4, specials=True, npu=True)
    )
    assert out.data_ptr() == x.data_ptr() and out.shape == (3, 8)
    assert placement.npu_of(out) == 0 and not status
    with plain_torch():
        assert torch.equal(out.view(torch.int16).view(-1), x.view(torch.int16).view(-1))


@pytest.mark.parametrize("npu", [False, True])
@pytest.mark.parametrize("path", emulation_path.PATHS)
def test_is_set_to_asks_about_the_tensors_themselves_on_both_paths(path, npu):
    """``is_set_to`` compares storages: an fp32 copy of either tensor is never set to the other
    (Huawei's test_tensors asks it of fp16 tensors)."""
    x = values(2, 3, npu=npu)
    with emulation_path.using(path):
        shared = torch.empty(0, dtype=torch.float16, device=x.device).set_(x)
        assert shared.is_set_to(x)
        assert not x.clone().is_set_to(x)


@pytest.mark.parametrize("path", emulation_path.PATHS)
def test_fills_of_tensors_whose_elements_share_memory_on_both_paths(path):
    """fill_ and zero_ write a zero-stride fp16 tensor as torch lets them, saturating on a 910;
    add_ on one is refused, as torch refuses it."""
    with emulation_path.using(path):
        x = torch.empty_strided((2, 3, 4), (1, 0, 1), dtype=torch.float16).fill_(80000.0)
        assert x.stride() == (1, 0, 1) and float_status.get()
        with plain_torch():
            assert torch.all(x == 65504) and x.storage().size() == 5
        x.zero_()
        with plain_torch():
            assert torch.all(x == 0)
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            x.add_(1)


def test_the_corpus_overflows_and_saturates():
    """The cases above do exercise the status: these set it, and their results saturate."""
    for name in (
        "add_overflow",
        "add_just_above_max",
        "mul_overflow",
        "fill_overflow",
        "copy_fp32_into_fp16",
        "masked_fill_big",
        "mm_overflow",
        "to_fp16",
        "mul_scalar_just_above_max",
        "div_scalar_zero",
    ):
        out, inputs, status, _ = run("general", *OPS[name])
        assert status, name
    for name in ("add_overflow", "mm_overflow"):
        out = run("general", *OPS[name])[0]
        with plain_torch():
            assert bool((out.abs() == 65504).all()), name
    assert not run("general", *OPS["masked_fill_none_selected"])[2]


# --- backward passes ----------------------------------------------------------------------------


def grads_of(loss_fn, *inputs):
    """Gradients of ``loss_fn(*leaves)`` w.r.t. every floating input, leaves made here."""
    leaves = [x.detach().requires_grad_(x.is_floating_point()) for x in inputs]
    loss = loss_fn(*leaves)
    loss.backward()
    return [x.grad for x in leaves if x.requires_grad]


BACKWARDS = {
    "conv_bn_relu_pool": (
        lambda x, w, b, bw, bb: (
            F.max_pool2d(
                F.relu(
                    F.batch_norm(F.conv2d(x, w, b, padding=1), None, None, bw, bb, training=True)
                ),
                2,
            )
            .float()
            .sum()
            * 1e3
        ),
        lambda: [
            values(2, 3, 8, 8),
            values(4, 3, 3, 3, seed=1),
            values(4, seed=2),
            torch.ones(4),
            torch.zeros(4),
        ],
    ),
    "attention": (
        lambda q, k, v: (
            (
                F.softmax(
                    (q @ k.transpose(-2, -1)).masked_fill(torch.ones(5, 5).triu(1).bool(), -1e4)
                    / 3.0,
                    -1,
                )
                @ v
            )
            .float()
            .pow(2)
            .sum()
        ),
        lambda: [values(2, 5, 4), values(2, 5, 4, seed=1), values(2, 5, 4, seed=2)],
    ),
    "layer_norm_gelu_linear": (
        lambda x, w, b, lw, lb: F.linear(F.gelu(F.layer_norm(x, (6,), lw, lb)), w, b).float().sum(),
        lambda: [
            values(3, 6),
            values(5, 6, seed=1),
            values(5, seed=2),
            values(6, seed=3),
            values(6, seed=4),
        ],
    ),
    "overflowing_gradient": (
        lambda x, w: (x @ w).float().sum() * 1e6,
        lambda: [values(4, 8, scale=10), values(8, 3, seed=1, scale=10)],
    ),
}


@pytest.mark.parametrize("name", sorted(BACKWARDS))
def test_fast_path_gives_the_general_path_gradients(name):
    loss_fn, make = BACKWARDS[name]
    assert_paths_agree(lambda *xs: grads_of(loss_fn, *xs), make)


# --- the fast path's parts ----------------------------------------------------------------------


def every_fp16_value():
    with plain_torch():
        return torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(torch.float16)


def test_the_float_status_is_the_process_s_whichever_npu_is_current():
    """A saturation on npu:1 with npu:1 current is what torch.npu's flag reads (a rank of an
    Ascend job runs on its own NPU, not npu:0), on both paths."""
    try:
        torch.npu.set_device(1)
        torch.npu.clear_npu_overflow_flag()
        big = torch.full((4,), 6e4, dtype=torch.float16).npu()
        assert torch.equal((big * 2.0).cpu(), torch.full((4,), 65504.0, dtype=torch.float16))
        assert torch.npu.get_npu_overflow_flag()
        torch.npu.clear_npu_overflow_flag()
        assert not torch.npu.get_npu_overflow_flag()
    finally:
        torch.npu.set_device(0)


def test_inputs_keep_their_nan_and_inf():
    x = values(3, 3, specials=True)
    with plain_torch():
        assert bool(x.view(-1)[2].isnan()) and x.view(-1)[0].item() == math.inf
        assert torch.full((2,), math.nan).half().isnan().all()


LAYOUTS = {
    "contiguous": lambda x: x,
    "offset": lambda x: x[5:],
    "transposed": lambda x: x.view(256, 256).t(),
    "channels_last": lambda x: x.view(4, 64, 16, 16).permute(0, 2, 3, 1),
    "size_one_dims": lambda x: x.view(1, 65536, 1).as_strided((1, 65536, 1), (7, 1, 3)),
    "strided": lambda x: x[::3],
    "expanded": lambda x: x[:7].view(7, 1).expand(7, 9),
}


POOL_GEOMETRIES = [  # kernel, stride, padding, dilation, ceil_mode, input H x W
    (2, None, 0, 1, False, (8, 8)),
    (3, 1, 1, 1, False, (7, 9)),
    (3, 2, 1, 1, True, (7, 8)),
    ((2, 3), (1, 2), (1, 0), 1, False, (6, 7)),
    (3, 2, 1, 2, True, (11, 10)),
    (2, 3, 0, 1, True, (7, 7)),
    (1, 1, 0, 1, False, (3, 4)),
    (5, 2, 2, 1, True, (5, 5)),
]


@pytest.mark.parametrize("geometry", POOL_GEOMETRIES, ids=str)
def test_max_pool_agrees_on_every_geometry_with_ties_nan_and_inf(geometry):
    kernel, stride, pad, dilation, ceil, (height, width) = geometry

    def make():
        with plain_torch():
            g = torch.Generator().manual_seed(3)
            # few distinct values: ties everywhere; then NaN, infinities and zeros of both signs
            x = torch.randint(-3, 4, (2, 3, height, width), generator=g).half()
            flat = x.view(-1)
            picks = torch.randint(0, flat.numel(), (12,), generator=g).tolist()
            for i, v in zip(
                picks,
                [
                    math.nan,
                    math.inf,
                    -math.inf,
                    -0.0,
                    math.nan,
                    65504.0,
                    -math.inf,
                    0.0,
                    math.nan,
                    -65504.0,
                    math.inf,
                    -0.0,
                ],
            ):
                flat[i] = v
            return [x]

    def pool(x):
        return torch.ops.aten.max_pool2d_with_indices(
            x,
            kernel if isinstance(kernel, tuple) else [kernel],
            [] if stride is None else stride,
            pad,
            dilation,
            ceil,
        )

    assert_paths_agree(pool, make)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: F.max_pool2d(x, 2, padding=2),  # padding above half the kernel
        lambda x: F.max_pool2d(x, 9),  # window larger than the input
        lambda x: x + values(5, 5),  # shapes that do not broadcast
        lambda x: torch.cat([x, values(2, 2)]),
    ],
    ids=["pool_padding", "pool_window", "add_shapes", "cat_shapes"],
)
def test_both_paths_refuse_the_same_calls_alike(call):
    messages = []
    for path in ("general", "fast"):
        with emulation_path.using(path), pytest.raises(RuntimeError) as error:
            call(values(1, 2, 6, 6))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_add_and_copies_agree_for_every_fp16_value():
    every = every_fp16_value
    specials = [0.0, -0.0, 1.0, -1.0, 6e-8, 0.5, 65504.0, -65504.0, 32.0, math.inf, math.nan]
    assert_paths_agree(lambda a: a.clone(), lambda: [every()], repeats=1)
    assert_paths_agree(lambda a: a.view(256, 256).t().contiguous(), lambda: [every()], repeats=1)
    assert_paths_agree(
        lambda a: a.view(256, 256).masked_fill(torch.arange(256) % 3 == 0, -7.5),
        lambda: [every()],
        repeats=1,
    )
    assert_paths_agree(lambda a: a.to(torch.float32), lambda: [every()], repeats=1)
    assert_paths_agree(lambda a, b: a.copy_(b), lambda: [every() * 0, every()], repeats=1)
    for v in specials:

        def make(v=v):
            with plain_torch():
                return [every(), torch.full((65536,), v).half()]

        assert_paths_agree(torch.add, make, repeats=1)
        assert_paths_agree(lambda a, b: b.add_(a), make, repeats=1)


def test_scaling_by_a_number_agrees_for_every_fp16_value():
    """mul and div by Python numbers (each value in the vector body and the scalar tail of
    torch's fp32 kernel), out of place and in place."""
    scalars = [4.0, 3.0, 0.1, -7, 128, 1e-5, 1e-40, 6e4, 0.0]
    for offset in (0, 1, 7):
        make = lambda offset=offset: [every_fp16_value()[offset:]]  # noqa: E731
        for v in scalars:
            assert_paths_agree(lambda a, v=v: a * v, make, repeats=1)
            assert_paths_agree(lambda a, v=v: a / v, make, repeats=1)
        for v in scalars[:3]:
            assert_paths_agree(lambda a, v=v: a.mul_(v), make, repeats=1)
            assert_paths_agree(lambda a, v=v: a.div_(v), make, repeats=1)


def test_relu_and_its_backward_agree_for_every_fp16_value():
    """Every value at several offsets (each lands in the vector body and the scalar tail of
    torch's fp32 kernel), as input, as gradient and as the saved input."""

    def each(offset):
        return lambda: [every_fp16_value()[offset:]]

    specials = [0.0, -0.0, 1.0, -1.0, 6e-8, -6e-8, math.inf, -math.inf, math.nan, 65504.0]
    for offset in (0, 1, 7):
        assert_paths_agree(F.relu, each(offset), repeats=1)
        assert_paths_agree(lambda a: a.relu_(), each(offset), repeats=1)
        for v in specials:

            def pair(grad_varies, offset=offset, v=v):
                def make():
                    every = every_fp16_value()[offset:]
                    other = torch.full(every.shape, v).half()
                    return [every, other] if grad_varies else [other, every]

                return make

            for grad_varies in (True, False):
                assert_paths_agree(
                    lambda g, s: aten.threshold_backward(g, s, 0), pair(grad_varies), repeats=1
                )


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_fp32_copies_equal_torch_conversion_for_every_fp16_value(layout):
    from torch_npu._fp16 import fp32_copies

    try:
        from torch._prims_common import is_non_overlapping_and_dense
    except ImportError:  # torch 2.x: the same test under its newer name
        from torch._prims_common import (
            is_non_overlapping_and_dense_or_false as is_non_overlapping_and_dense,
        )

    x = LAYOUTS[layout](every_fp16_value())
    assert fp32_copies.non_overlapping_and_dense(
        x.shape, x.stride()
    ) == is_non_overlapping_and_dense(x)
    got = fp32_copies.to_fp32(x)
    with plain_torch():
        want = x.to(torch.float32)
        # A NaN converts as IEEE converts it: quiet, its payload kept. torch 2.x's own conversion
        # does so in its vector loop only (its scalar tail returns 0x7FFFFFFF).
        nan = want.isnan()
        half_bits = x.view(torch.int16)[nan].to(torch.int32)
        quiet = torch.tensor(0x7FC00000, dtype=torch.int32)
        want.view(torch.int32)[nan] = (
            ((half_bits & 0x8000) << 16) | quiet | ((half_bits & 0x03FF) << 13)
        )
    assert same(got, want)


@pytest.mark.parametrize("inf_nan", [False, True], ids=["saturation", "inf_nan"])
def test_fp16_nans_widen_alike_on_both_paths_wherever_they_stand(inf_nan):
    """fp16 NaNs with payloads, at every position of tensors too short for torch's vector loop
    and around its end, widened by ``float()`` and read by an fp32 op that keeps them."""
    from overlay_support.npu_op_checks import emulated_chip

    def make(n):
        def inputs():
            with plain_torch():
                bits = torch.tensor([0x7C01, 0xFE00, 0x7D55, 0xFFFF, 0x3C00], dtype=torch.int32)
                x = bits.repeat(n)[:n].to(torch.int16).view(torch.float16)
            return [placement.put(x, 0)]

        return inputs

    with emulated_chip("Ascend910B1" if inf_nan else "Ascend910A", inf_nan=inf_nan):
        for n in (1, 3, 7, 8, 9, 15, 17, 33):
            assert_paths_agree(lambda x: x.float(), make(n), repeats=1)
            assert_paths_agree(lambda x: torch.add(x, 1.0, alpha=1), make(n), repeats=1)


def test_scratch_pool_lends_buffers_and_keeps_those_a_result_holds():
    from torch_npu._fp16 import scratch_pool

    scratch_pool.clear()
    a = scratch_pool.take((2, 3), (1, 2), 6)
    ptr = a.data_ptr()
    assert a.shape == (2, 3) and a.stride() == (1, 2) and a.dtype == torch.float32
    scratch_pool.give_back([])
    assert scratch_pool.kept_bytes() == 24
    b = scratch_pool.take((6,), (1,), 6)
    assert b.data_ptr() == ptr, "reused"
    scratch_pool.give_back([b[2:]])  # a result lies in the buffer: it is not lent again
    c = scratch_pool.take((6,), (1,), 6)
    assert c.data_ptr() != ptr
    scratch_pool.give_back([])
    big = scratch_pool.MAX_BUFFER_BYTES // 4 + 1
    scratch_pool.take((big,), (1,), big)
    scratch_pool.give_back([])
    assert scratch_pool.kept_bytes() == 24, "buffers above the limit are not kept"
    torch.npu.empty_cache()
    assert scratch_pool.kept_bytes() == 0


def test_the_fast_path_keeps_freed_host_memory_and_empty_cache_returns_it():
    from torch_npu._device import host_allocator

    assert host_allocator._glibc() is not None, "Debian's C library is glibc"
    assert host_allocator._applied == [True], "enabling the fast emulation told glibc"
    assert host_allocator.keep_freed_memory()
    torch.npu.empty_cache()  # malloc_trim


def test_a_failing_operation_gives_its_buffers_back():
    from torch_npu._fp16 import scratch_pool

    scratch_pool.clear()
    a, b = values(4, 5), values(6, 7)
    with emulation_path.using("fast"), pytest.raises(RuntimeError):
        a @ b
    assert not scratch_pool._pool.lent
    with emulation_path.using("fast"):
        a @ values(5, 2)
    assert not scratch_pool._pool.lent


def test_the_fast_path_gives_back_its_buffers_after_a_sparse_result():
    from torch_npu._fp16 import scratch_pool

    scratch_pool.clear()
    g = torch.Generator().manual_seed(0)
    indices = torch.randint(0, 40, (2, 3000), generator=g)
    v = values(3000)
    with emulation_path.using("fast"):
        out = torch.sparse_coo_tensor(indices.npu(), v.npu(), (40, 40)).coalesce()
    assert not scratch_pool._pool.lent
    assert out.is_npu and out.dtype == torch.float16 and out.layout == torch.sparse_coo
    with plain_torch():
        host = torch.sparse_coo_tensor(indices, v.float(), (40, 40)).coalesce()
    assert torch.equal(out._indices().cpu(), host._indices())
    assert torch.equal(out._values().cpu(), host._values().half())
    # A buffer that a sparse result's values lie in stays the result's.
    lent = scratch_pool.take((6,), (1,), 6)
    held = torch.sparse_coo_tensor(torch.zeros(1, 6, dtype=torch.long), lent, (1,))
    assert held._values().data_ptr() == lent.data_ptr()
    scratch_pool.give_back([held])
    assert scratch_pool.take((6,), (1,), 6).data_ptr() != lent.data_ptr()
    scratch_pool.give_back([])


def test_output_dtype_keys_tell_apart_what_the_meta_call_sees():
    from torch_npu._fp16 import output_dtypes

    def key(*args, **kwargs):
        return output_dtypes.call_key(aten.add.Tensor, args, kwargs)

    a = values(2, 3)
    assert key(a, a) == key(values(2, 3, seed=1), a)  # values do not matter
    assert key(a, a) != key(a.t().contiguous().t(), a)  # strides do
    assert key(a, a) != key(a, values(2, 3, dtype=torch.float32))
    assert key(a, 0.0) != key(a, -0.0) and key(a, 1) != key(a, 1.0) != key(a, True)
    assert key(a, float("nan")) == key(a, float("nan"))
    assert key(a, torch.zeros(2, dtype=torch.complex64)) is None
    assert key(a, generator=torch.Generator()) is None


def test_an_unknown_emulation_path_is_refused():
    with pytest.raises(ValueError, match="not one of fast, general"):
        emulation_path.select("quick")
    assert emulation_path.selected() in emulation_path.PATHS


# --- whole training steps -----------------------------------------------------------------------


class TinyCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(8 * 2 * 2, 5),
        )

    def forward(self, x):
        return self.body(x)


class TinyTransformer(nn.Module):
    def __init__(self, vocab=20, seq=6, width=16, heads=2):
        super().__init__()
        self.heads = heads
        self.tokens = nn.Embedding(vocab, width)
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
        self.head = nn.Linear(width, 5)
        self.register_buffer("future", torch.ones(seq, seq, dtype=torch.bool).triu(1))

    def forward(self, tokens):
        x = self.tokens(tokens)
        b, t, w = x.shape
        q, k, v = (
            z.reshape(b, t, self.heads, w // self.heads).transpose(1, 2)
            for z in self.qkv(self.norm1(x)).chunk(3, dim=-1)
        )
        scores = (q @ k.transpose(-2, -1) / math.sqrt(w // self.heads)).masked_fill(
            self.future, -1e9
        )  # saturates to -65504 and raises the status in the forward pass
        x = x + self.proj((F.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, t, w))
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return self.head(x.mean(1))


def train_o2_by_hand(path, make_model, batch, scale, steps=8):
    """fp16 model, fp32 masters, dynamic loss scale from ``scale`` (the first steps overflow and are
    skipped, as amp's O2 skips them), SGD; returns every step's loss, status and parameters."""
    with emulation_path.using(path):
        torch.manual_seed(0)
        model = make_model()
        for m in model.modules():
            if not isinstance(m, nn.BatchNorm2d):
                m.half()  # BatchNorm stays fp32, as O2's keep_batchnorm_fp32
        params = [p for p in model.parameters()]
        masters = [p.detach().float() for p in params]
        record = []
        x, y = batch()
        for _ in range(steps):
            loss = F.cross_entropy(model(x).float(), y)
            forward_status = float_status.clear()  # as amp.scale_loss clears it on entry
            (loss * scale).backward()
            overflow = float_status.clear()
            if overflow:
                scale /= 2
            else:
                with torch.no_grad():
                    for p, m in zip(params, masters):
                        m.add_(p.grad.float() / scale, alpha=-0.1)
                        p.copy_(m)
            for p in params:
                p.grad.zero_()
            record.append(
                (
                    loss.detach().clone(),
                    forward_status,
                    overflow,
                    [p.detach().clone() for p in params],
                    [m.clone() for m in masters],
                )
            )
        return record


def image_batch():
    with plain_torch():
        g = torch.Generator().manual_seed(1)
        return torch.randn(4, 3, 8, 8, generator=g).half(), torch.randint(0, 5, (4,), generator=g)


def token_batch():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 20, (3, 6), generator=g), torch.randint(0, 5, (3,), generator=g)


@pytest.mark.parametrize(
    "make_model,batch,scale",
    [(TinyCnn, image_batch, 2.0**17), (TinyTransformer, token_batch, 2.0**20)],
    ids=["cnn", "transformer"],
)
def test_training_steps_are_bit_identical_on_both_paths(make_model, batch, scale):
    general = train_o2_by_hand("general", make_model, batch, scale)
    fast = train_o2_by_hand("fast", make_model, batch, scale)
    assert [r[2] for r in general][:2] == [True, True], "the first steps overflow"
    assert not general[-1][2], "and later steps train"
    for step, (want, got) in enumerate(zip(general, fast)):
        assert got[1:3] == want[1:3], f"step {step}: float status"
        assert same(got[0], want[0]) and same(got[3], want[3]) and same(got[4], want[4]), step
