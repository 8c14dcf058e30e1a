"""bfloat16 amp on a chip without bfloat16 (the emulated 910, the default): each way of asking
for it is refused at amp.initialize with an error naming the chip, before anything changed.
Prints 'ok <case>' per case, then one JSON line of the chip and the message; the last case
shows fp16's O2 still initializes after the refusals. Bad bfloat16 options (an unknown
patch_torch_functions_type, one at O2, O4/O5 made fp16) are errors too, on any chip."""

import json

import torch
import torch.nn as nn
from apex import amp

ASKS = {
    "O4": dict(opt_level="O4"),
    "O5": dict(opt_level="O5"),
    "O1_patch_type": dict(opt_level="O1", patch_torch_functions_type=torch.bfloat16),
    "O2_cast_model_type": dict(opt_level="O2", cast_model_type=torch.bfloat16),
    "O2_cast_model_type_dynamic": dict(
        opt_level="O2", cast_model_type=torch.bfloat16, loss_scale="dynamic"
    ),
}
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2)).npu()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
before = {k: v.clone() for k, v in model.state_dict().items()}
linear, matmul = torch.nn.functional.linear, torch.matmul  # O1 would patch them
messages = set()
for case, kwargs in ASKS.items():
    try:
        amp.initialize(model, opt, verbosity=0, **kwargs)
    except RuntimeError as e:
        messages.add(str(e))
    else:
        raise AssertionError(case + ": bfloat16 was not refused")
    assert not hasattr(opt, "_amp_stash"), case + ": the optimizer was processed"
    state = model.state_dict()
    assert all(state[k].dtype == v.dtype and torch.equal(state[k], v) for k, v in before.items()), (
        case + ": the model was changed"
    )
    assert torch.nn.functional.linear is linear and torch.matmul is matmul, case + ": patched"
    print("ok", case)
BAD = {
    "bad_patch_type": (
        dict(opt_level="O1", patch_torch_functions_type=torch.float32),
        "patch_torch_functions_type must be torch.float16 or torch.bfloat16",
    ),
    "patch_type_at_O2": (
        dict(opt_level="O2", patch_torch_functions_type=torch.bfloat16),
        "it should only be set with opt_level='O1' or 'O4'",
    ),
    "O4_made_fp16": (
        dict(opt_level="O4", patch_torch_functions_type=torch.float16),
        "opt_level='O4' is O1 in bfloat16",
    ),
    "O5_made_fp16": (
        dict(opt_level="O5", cast_model_type=torch.float16),
        "opt_level='O5' is O2 in bfloat16",
    ),
}
for case, (kwargs, text) in BAD.items():
    try:
        amp.initialize(model, opt, verbosity=0, **kwargs)
    except RuntimeError as e:
        assert text in str(e), (case, str(e))
    else:
        raise AssertionError(case + ": no error")
    assert not hasattr(opt, "_amp_stash"), case + ": the optimizer was processed"
    assert all(p.dtype == torch.float32 for p in model.parameters()), case + ": cast"
    print("ok", case)
model, opt = amp.initialize(model, opt, opt_level="O2", verbosity=0)
assert {p.dtype for p in model.parameters()} == {torch.float16, torch.float32}
print("ok fp16_O2_after")
assert len(messages) == 1, messages
print(json.dumps({"chip": torch.npu.get_device_name(), "message": messages.pop()}))
