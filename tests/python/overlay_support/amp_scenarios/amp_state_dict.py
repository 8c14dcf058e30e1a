"""amp.state_dict() in the layout NVIDIA's and Ascend's apex load, the fp32 master weights in
the optimizer's state_dict, and both older and foreign checkpoints loading here.

    python amp_state_dict.py UPSTREAM_FRONTEND_PY

UPSTREAM_FRONTEND_PY is NVIDIA Apex's own apex/amp/frontend.py (Ascend's patch leaves its
load_state_dict as it is); its load_state_dict runs as written against our amp state. Prints
one JSON document."""

import ast
import copy
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.amp._amp_state import _amp_state
from apex.optimizers import NpuFusedAdam


def theirs_load_state_dict():
    """NVIDIA's amp.load_state_dict, its source run in a namespace over our amp state."""
    with open(sys.argv[1]) as f:
        tree = ast.parse(f.read())
    func = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "load_state_dict"
    )
    namespace = {"_amp_state": _amp_state}
    exec(compile(ast.Module(body=[func], type_ignores=[]), sys.argv[1], "exec"), namespace)
    return namespace["load_state_dict"]


def setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4)).npu()
    opt = NpuFusedAdam(model.parameters(), lr=1e-2)
    return amp.initialize(model, opt, opt_level="O2", verbosity=0, dynamic_init_scale=2.0**10)


model, opt = setup()
g = torch.Generator().manual_seed(1)
for _ in range(3):
    x, y = torch.randn(8, 6, generator=g).npu(), torch.randint(0, 4, (8,), generator=g).npu()
    opt.zero_grad()
    with amp.scale_loss(F.cross_entropy(model(x.half()).float(), y), opt) as scaled:
        scaled.backward()
    opt.step()
out = {}
amp_state = amp.state_dict()
opt_state = opt.state_dict()
masters = [p.detach().clone() for p in opt._amp_stash.all_fp32_from_fp16_params]
out["amp_keys"] = sorted(amp_state)
out["opt_keys"] = sorted(opt_state)
out["masters_saved"] = all(
    torch.equal(a, b) for a, b in zip(opt_state["amp_master_params"], masters)
)
# NVIDIA's (and Ascend's) loader takes our amp state.
before = amp_state["loss_scaler0"]["loss_scale"]
try:
    theirs_load_state_dict()(copy.deepcopy(amp_state))
    out["theirs_loads_ours"] = _amp_state.loss_scalers[0].loss_scale() == before
except Exception as e:  # reported, the test fails on it
    out["theirs_loads_ours"] = repr(e)
# torch's Optimizer.load_state_dict (theirs) takes our optimizer state, masters' key and all.
params = [p for group in opt.param_groups for p in group["params"]]
plain = torch.optim.Adam([nn.Parameter(p.detach().clone()) for p in params], lr=1e-2)
plain.load_state_dict(copy.deepcopy(opt_state))
out["torch_loader_takes_ours"] = all(
    torch.equal(plain.state[q]["exp_avg"], opt.state[p]["exp_avg"])
    for p, q in zip(params, [q for group in plain.param_groups for q in group["params"]])
)
# An Ascend amp checkpoint (loss scalers only) loads here.
amp.load_state_dict({"loss_scaler0": {"loss_scale": 512.0, "unskipped": 7}})
out["ascend_amp_loaded"] = [
    _amp_state.loss_scalers[0].loss_scale(),
    _amp_state.loss_scalers[0]._unskipped,
]
# Our older layout: masters in amp.state_dict() as master_params0.
with torch.no_grad():
    for p in opt._amp_stash.all_fp32_from_fp16_params:
        p.zero_()
amp.load_state_dict(
    {"loss_scaler0": {"loss_scale": 256.0, "unskipped": 0}, "master_params0": masters}
)
out["legacy_masters_loaded"] = all(
    torch.equal(a, b) for a, b in zip(opt._amp_stash.all_fp32_from_fp16_params, masters)
)
# The optimizer's own state_dict restores the masters.
with torch.no_grad():
    for p in opt._amp_stash.all_fp32_from_fp16_params:
        p.zero_()
opt.load_state_dict(opt_state)
out["opt_masters_loaded"] = all(
    torch.equal(a, b) for a, b in zip(opt._amp_stash.all_fp32_from_fp16_params, masters)
)
print(json.dumps(out))
