"""torch_npu.contrib.module's Mish, SiLU and Swish: the npu_mish / npu_silu operators as layers,
against their formulas in fp32 (fp16 rounded once, see npu_op_checks), forward and backward."""

import warnings

import pytest
import torch
import torch.nn.functional as F

from overlay_support.npu_op_checks import DTYPES, check_against_formula, randn, torch_npu
from torch_npu.contrib.module import Mish, SiLU, Swish

FORMULAS = {Mish: lambda x: x * torch.tanh(F.softplus(x)), SiLU: lambda x: x * torch.sigmoid(x)}


@pytest.mark.parametrize("layer", [Mish, SiLU])
@pytest.mark.parametrize("dtype", DTYPES)
def test_activation_layers_are_their_formula_forward_and_backward(layer, dtype):
    check_against_formula(layer(), FORMULAS[layer], [randn(2, 3, 5, 7, seed=11, scale=4)], dtype)


def test_activation_layers_warn_they_are_deprecated_and_swish_is_silu():
    assert Swish is SiLU and torch_npu.contrib.Mish is Mish
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Mish(), SiLU()
    texts = [str(w.message) for w in caught if w.category is FutureWarning]
    assert any("Mish is deprecated" in t and "torch.nn.Mish" in t for t in texts), texts
    assert any("SiLU is deprecated" in t and "torch.nn.SiLU" in t for t in texts), texts
    assert not list(Mish().parameters())
