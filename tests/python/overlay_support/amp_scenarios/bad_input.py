"""Bad input: each case prints 'ok <case>' when it fails with the expected clear error and
leaves nothing half-applied."""

import torch
import torch.nn as nn
from apex import amp
from apex.optimizers import NpuFusedAdam, NpuFusedSGD


def expect(case, exc, text, fn):
    try:
        fn()
    except exc as e:
        assert text in str(e), (case, str(e))
        print("ok", case)
        return
    raise AssertionError(case + ": no error")


model = nn.Linear(4, 2).npu()
expect(
    "int64_param",
    TypeError,
    "has dtype torch.int64",
    lambda: NpuFusedSGD([nn.Parameter(torch.zeros(2)), torch.zeros(2, dtype=torch.int64)], lr=0.1),
)
expect(
    "bf16_param",
    TypeError,
    "has dtype torch.bfloat16",
    lambda: NpuFusedAdam([torch.zeros(2, dtype=torch.bfloat16)]),
)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
expect(
    "combine_grad_O0",
    ValueError,
    "combine_grad=True needs opt_level 'O1' or 'O2'",
    lambda: amp.initialize(model, opt, opt_level="O0", combine_grad=True),
)
assert not hasattr(opt, "_amp_stash"), "optimizer was half-processed"
expect(
    "user_cast_preferred_O2",
    ValueError,
    "user_cast_preferred=True only applies",
    lambda: amp.initialize(model, opt, opt_level="O2", user_cast_preferred=True),
)
expect(
    "combine_ddp",
    RuntimeError,
    "needs the process group first",
    lambda: amp.initialize(model, opt, opt_level="O2", combine_grad=True, combine_ddp=True),
)
assert next(model.parameters()).dtype == torch.float32, "model was cast"

model, opt = amp.initialize(model, opt, opt_level="O2", loss_scale="dynamic", verbosity=0)
good = amp.state_dict()
for case, bad, text in [
    ("not_a_dict", [1, 2], "expected a dict"),
    ("negative_scale", {"loss_scaler0": {"loss_scale": -1.0, "unskipped": 0}}, "positive finite"),
    (
        "nan_scale",
        {"loss_scaler0": {"loss_scale": float("nan"), "unskipped": 0}},
        "positive finite",
    ),
    ("missing_key", {"loss_scaler0": {"loss_scale": 8.0}}, '"unskipped"'),
    (
        "unexpected_key",
        {"loss_scaler0": {"loss_scale": 8.0, "unskipped": 1}, "junk": 1},
        'Unexpected key(s) in state_dict: "junk"',
    ),
    (
        "bad_masters",
        {"loss_scaler0": {"loss_scale": 8.0, "unskipped": 1}, "master_params0": [torch.zeros(3)]},
        "must be a list of 2 tensors",
    ),
]:
    expect("load_" + case, RuntimeError, text, lambda: amp.load_state_dict(bad))
    assert amp.state_dict()["loss_scaler0"] == good["loss_scaler0"], case + " half-applied"
