"""The emulator's public API against real torch_npu's: every name of ``torch_npu.__all__``
resolves and ``from torch_npu import *`` binds it, every declared operator is in ``__all__``,
and the module paths of the torch_npu 2.14 wheel that the emulator provides (``CLAIMED``, the
paths Ascend scripts import) exist, each name of their ``__all__`` resolving.
tests/python/data/torch_npu_2_14_modules.txt lists the wheel's public module paths; an emulator
module with a public path outside it must be one of the few ``EMULATOR_ONLY`` ones, so no new
path that torch_npu lacks appears unnoticed."""

import importlib
import os
import pkgutil

import pytest

from overlay_support.npu_op_checks import torch_npu

DATA = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "data", "torch_npu_2_14_modules.txt"
)

# The torch_npu 2.14 module paths the emulator provides.
CLAIMED = [
    "torch_npu",
    "torch_npu.contrib",
    "torch_npu.contrib.function",
    "torch_npu.contrib.function.anchor_generator",
    "torch_npu.contrib.function.bbox_coder",
    "torch_npu.contrib.function.fuse_add_softmax_dropout",
    "torch_npu.contrib.function.fused_attention",
    "torch_npu.contrib.function.index_op",
    "torch_npu.contrib.function.iou",
    "torch_npu.contrib.function.matmul_transpose",
    "torch_npu.contrib.function.nms",
    "torch_npu.contrib.function.npu_functional",
    "torch_npu.contrib.function.roll",
    "torch_npu.contrib.module",
    "torch_npu.contrib.module.activations",
    "torch_npu.contrib.module.batchnorm_with_int32_count",
    "torch_npu.contrib.module.channel_shuffle",
    "torch_npu.contrib.module.crossentropy",
    "torch_npu.contrib.module.deform_conv",
    "torch_npu.contrib.module.drop_path",
    "torch_npu.contrib.module.ensemble_dropout",
    "torch_npu.contrib.module.npu_modules",
    "torch_npu.contrib.module.prefetcher",
    "torch_npu.contrib.module.ps_roi_pooling",
    "torch_npu.contrib.module.roi_align",
    "torch_npu.contrib.transfer_to_npu",
    "torch_npu.distributed",
    "torch_npu.distributed.fsdp",
    "torch_npu.npu",
    "torch_npu.npu.aclnn",
    "torch_npu.npu.amp",
    "torch_npu.npu.amp.autocast_mode",
    "torch_npu.npu.amp.common",
    "torch_npu.npu.amp.grad_scaler",
    "torch_npu.npu.amp.sharded_grad_scaler",
    "torch_npu.npu.deterministic",
    "torch_npu.npu.memory",
    "torch_npu.npu.random",
    "torch_npu.npu.streams",
    "torch_npu.npu.utils",
    "torch_npu.optim",
    "torch_npu.optim.npu_fused_adadelta",
    "torch_npu.optim.npu_fused_adam",
    "torch_npu.optim.npu_fused_adamp",
    "torch_npu.optim.npu_fused_adamw",
    "torch_npu.optim.npu_fused_bert_adam",
    "torch_npu.optim.npu_fused_lamb",
    "torch_npu.optim.npu_fused_optim_base",
    "torch_npu.optim.npu_fused_rmsprop",
    "torch_npu.optim.npu_fused_rmsprop_tf",
    "torch_npu.optim.npu_fused_sgd",
    "torch_npu.profiler",
    "torch_npu.utils",
    "torch_npu.utils.collect_env",
    "torch_npu.utils.combine_tensors",
    "torch_npu.utils.profiler",
]

# The emulator's modules with a public path that torch_npu 2.14 does not have: the emulator's
# own machinery (hccl over gloo, the autocast policy, ...) named before private names were the
# rule, and two paths of torch_npu 1.x. A new module of the emulator's own starts with "_".
EMULATOR_ONLY = {
    "torch_npu.distributed.after_import",
    "torch_npu.distributed.ddp",
    "torch_npu.distributed.hccl",
    "torch_npu.distributed.hccl_agreement",
    "torch_npu.distributed.hccl_dtypes",
    "torch_npu.distributed.hccl_group",
    "torch_npu.distributed.hccl_timeouts",
    "torch_npu.npu.amp.autocast_policy",
    "torch_npu.npu.amp.autocast_state",
    "torch_npu.npu.amp.checkpoint_recompute",
    "torch_npu.npu.amp.non_finite_check",
    "torch_npu.npu.npurt",
    "torch_npu.npu.graph",  # torch_npu 1.x's graph mode
    "torch_npu.utils.error_code",  # torch_npu 1.x's name of utils._error_code
}


def real_modules():
    with open(DATA) as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def emulator_modules():
    """The public module paths of the emulator's package, from its files (not imported)."""
    found = {"torch_npu"}
    for info in pkgutil.walk_packages(torch_npu.__path__, "torch_npu.", onerror=lambda _: None):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.add(info.name)
    return found


def test_everything_in_all_resolves():
    names = torch_npu.__all__
    assert len(names) == len(set(names)), "torch_npu.__all__ names something twice"
    missing = [name for name in names if not hasattr(torch_npu, name)]
    assert not missing, f"in torch_npu.__all__ but not in torch_npu: {missing}"


def test_star_import_binds_all():
    namespace = {}
    exec("from torch_npu import *", namespace)
    assert not set(torch_npu.__all__) - set(namespace)
    assert namespace["npu_rms_norm"] is torch_npu.npu_rms_norm


def test_every_declared_operator_is_public():
    operators = torch_npu._ops.OPERATORS
    assert len(operators) > 100 and "npu_fusion_attention" in operators
    assert not set(operators) - set(torch_npu.__all__)
    for name, function in operators.items():
        assert getattr(torch_npu, name) is function, name


def test_the_claimed_paths_are_torch_npus():
    assert len(real_modules()) > 150
    assert not set(CLAIMED) - real_modules()


@pytest.mark.parametrize("path", CLAIMED)
def test_a_claimed_path_imports_with_its_all(path):
    module = importlib.import_module(path)
    missing = [name for name in getattr(module, "__all__", []) if not hasattr(module, name)]
    assert not missing, f"{path}.__all__ names what it lacks: {missing}"


def test_every_public_module_is_torch_npus_or_known():
    invented = sorted(emulator_modules() - real_modules() - EMULATOR_ONLY)
    assert not invented, f"public module paths torch_npu 2.14 does not have: {invented}"
    assert set(CLAIMED) == emulator_modules() & real_modules(), (
        "CLAIMED should list every torch_npu path the emulator has: "
        f"{sorted(emulator_modules() & real_modules() ^ set(CLAIMED))}"
    )


def test_the_npu_memory_and_streams_modules_are_torch_npus():
    """Scripts import these two by path (``from torch_npu.npu.streams import Event``); their
    names are also ``torch_npu.npu``'s, the same objects."""
    from torch_npu.npu import memory, streams

    for module in (memory, streams):
        for name in module.__all__:
            assert getattr(torch_npu.npu, name) is getattr(module, name), name
    assert streams.Stream.__module__ == "torch_npu.npu.streams"
    assert memory.memory_allocated(0) >= 0
