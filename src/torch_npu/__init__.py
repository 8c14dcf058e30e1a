"""torch_npu for the emulated Ascend NPU, shipped by apexnpu as its own wheel.

On a machine without Huawei's torch_npu, ``import torch_npu`` gives Ascend training scripts the
API they expect (``torch.npu``, ``npu:N`` devices, ``Tensor.npu()``, ``is_npu``, the
``torch.npu.*Tensor`` types, hccl, ``torch.npu.amp``, ``torch_npu.npu.utils``, the profiler
entry points), backed by the CPU with the NPU's fp16 arithmetic. It needs nothing but torch (1.13
or 2.x); the compiled kernels in ``torch_npu._apexnpu`` make it faster. Never install this wheel
beside the real torch_npu: both own the import name ``torch_npu``.
"""
# Marks the emulator: its NPU memory is host memory (apex's fused CPU kernels may run on it).
__apexnpu_emulator__ = True

import torch  # noqa: E402

from . import _emulator  # noqa: E402

_emulator.install()

from . import _ops, contrib, distributed, npu, optim, profiler, utils  # noqa: E402,F401
from ._device.formats import (get_npu_format, get_storage_size, npu_format_cast,  # noqa: E402
                              npu_format_cast_)
from .npu.utils import _erase_stream as erase_stream  # noqa: E402
from ._ops import (_dropout_with_byte_mask, _dropout_with_byte_mask_backward,  # noqa: E402,F401
                   _npu_dropout, dropout_with_byte_mask, fast_gelu, npu_apply_adam,
                   npu_apply_adam_w, npu_batch_nms, npu_bert_apply_adam, npu_bmmV2,
                   npu_bounding_box_decode, npu_bounding_box_encode, npu_change_data_ptr,
                   npu_confusion_transpose,
                   npu_deformable_conv2d, npu_deformable_conv2dbk, npu_dropout,
                   npu_dropout_backward, npu_dropout_do_mask, npu_dropout_gen_mask,
                   npu_dropout_with_add_softmax, npu_fast_gelu, npu_fusion_attention, npu_gelu,
                   npu_indexing, npu_iou, npu_layer_norm_eval, npu_linear, npu_max, npu_mish,
                   npu_mish_backward, npu_nms_with_mask, npu_one_hot, npu_pad,
                   npu_ps_roi_pooling, npu_ps_roi_pooling_backward, npu_ptiou,
                   npu_random_choice_with_mask, npu_rms_norm, npu_roi_align, npu_roi_alignbk,
                   npu_rotary_mul, npu_scaled_masked_softmax, npu_silu, npu_silu_,
                   npu_softmax_cross_entropy_with_logits,
                   npu_softmax_cross_entropy_with_logits_backward, npu_swiglu)

_ops.install()

__all__ = ["npu", "get_storage_size", "npu_format_cast", "npu_format_cast_", "get_npu_format",
           "erase_stream",
           "profiler", "utils", "contrib", "distributed", "optim"] + sorted(_ops.OPERATORS)
