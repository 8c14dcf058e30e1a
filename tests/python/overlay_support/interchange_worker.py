"""Checkpoints and hooks of Huawei's apex against ours (test_huawei_apex_interchange.py).

Run by the python of a venv holding one apex (Huawei's or ours) beside the emulator's wheel:

    python interchange_worker.py write LEVEL COMBINE DIR [NAME...]       train WRITTEN steps per
                                                                 optimizer, save DIR/<name>.pt
    python interchange_worker.py resume LEVEL COMBINE DIR OUT [NAME...]  resume each DIR/<name>.pt,
                                                                 train RESUMED steps, save weights
    python interchange_worker.py hooks OUT                       a subclass overriding _group_step,
                                                                 and what the combined getters give

COMBINE is 0 or 1 (amp's combine_grad). A checkpoint holds the model's, the optimizer's and amp's
state_dict, as NVIDIA's and Ascend's manuals save them; a resume loads the model before
amp.initialize and the optimizer and amp after it. The loss scale is static and a power of two
(unscaling is exact), so the two apexes can agree to the bit. NAMEs limit a run to those
optimizers (all of OPTIMIZERS by default), to look at one by hand.
"""

import sys

import torch
import torch_npu  # noqa: F401 - the emulator, as an Ascend script imports it
import torch.nn.functional as F

from apex import amp
import apex.optimizers

WRITTEN, RESUMED = 6, 6
OPTIMIZERS = {
    "NpuFusedSGD": dict(lr=0.05, momentum=0.9),
    "NpuFusedAdam": dict(lr=1e-2),
    "NpuFusedAdamW": dict(lr=1e-2, weight_decay=1e-2),
    "NpuFusedAdamP": dict(lr=1e-2),
    # A warmup schedule that reads the step count. Ascend's checkpoints hold step 0 (it counts in
    # its combined state only), ours the steps taken: either apex resumes each from that count.
    "NpuFusedBertAdam": dict(lr=1e-2, warmup=0.1, t_total=20),
    "NpuFusedAdadelta": dict(lr=1.0),
    "NpuFusedLamb": dict(lr=5e-2),
    "Lamb": dict(lr=5e-2),
    "NpuFusedRMSprop": dict(lr=1e-3),
    "NpuFusedRMSpropTF": dict(lr=1e-2),
}


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))


def batch(i):
    g = torch.Generator().manual_seed(100 + i)
    x = torch.randn(32, 16, generator=g)
    return x.npu(), torch.tanh(x.sum(1, keepdim=True)).npu()


def initialize(name, level, combine, model_state=None):
    model = make_model()
    if model_state is not None:
        model.load_state_dict(model_state)
    model = model.npu()
    opt = getattr(apex.optimizers, name)(model.parameters(), **OPTIMIZERS[name])
    return amp.initialize(
        model, opt, opt_level=level, loss_scale=128.0, combine_grad=combine or None, verbosity=0
    )


def train(model, opt, first, steps):
    for i in range(first, first + steps):
        x, y = batch(i)
        opt.zero_grad()
        loss = F.mse_loss(model(x).float(), y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()


def host(state):
    """A state_dict with every tensor on the host, as a file moved between machines holds it."""
    if isinstance(state, torch.Tensor):
        return state.detach().cpu().clone()
    if isinstance(state, dict):
        return {k: host(v) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(host(v) for v in state)
    return state


def write(level, combine, folder, names):
    for name in names:
        model, opt = initialize(name, level, combine)
        train(model, opt, 0, WRITTEN)
        torch.save(
            {
                "model": host(model.state_dict()),
                "optimizer": host(opt.state_dict()),
                "amp": amp.state_dict(),
            },
            f"{folder}/{name}.pt",
        )


def resume(level, combine, folder, out, names):
    results = {}
    for name in names:
        ck = torch.load(f"{folder}/{name}.pt")
        model, opt = initialize(name, level, combine, ck["model"])
        opt.load_state_dict(ck["optimizer"])
        amp.load_state_dict(ck["amp"])
        train(model, opt, WRITTEN, RESUMED)
        results[name] = {
            "master": [p.detach().float().cpu().clone() for p in amp.master_params(opt)],
            "model": [p.detach().float().cpu().clone() for p in model.parameters()],
            "scale": amp._amp_state.loss_scalers[0].loss_scale(),
        }
    torch.save(results, out)


class ScaledAdam(apex.optimizers.NpuFusedAdam):
    """A subclass as published BERT code writes one: its own update over Ascend's combined
    buffers (a plain SGD step with the rate halved for the second group), its own step counts."""

    def _group_step(self, group_index):
        group = self.param_groups[group_index]
        for p in group["params"]:
            if p.grad is not None:
                self.state[p]["step"] += 1
        stash = self._amp_stash
        lr = group["lr"] * (0.5 if group_index == 1 else 1.0)
        for param, grad, state in zip(
            stash.combined_params_indexed_by_group[group_index],
            stash.combined_grads_indexed_by_group[group_index],
            stash.combined_param_states_indexed_by_group[group_index],
        ):
            if param is None or grad is None:
                continue
            state["exp_avg"].mul_(0.9).add_(grad)
            param.add_(state["exp_avg"], alpha=-lr)


def describe(tensors):
    return [None if t is None else (str(t.dtype), t.numel()) for t in tensors]


def attributes(optimizer):
    """The options amp leaves on an optimizer, "missing" where it leaves none."""
    return {
        name: getattr(optimizer, name, "missing")
        for name in (
            "accelerate",
            "combine_ddp",
            "ddp_replica_count",
            "check_combined_tensors",
            "is_npu_fused_optimizer",
        )
    }


def hooks(out):
    result = {}
    # The subclass, two groups, O2 with a BatchNorm kept in fp32 (masters of both kinds).
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU(), torch.nn.Linear(32, 1)
    ).npu()
    params = list(model.parameters())
    opt = ScaledAdam([dict(params=params[:4]), dict(params=params[4:])], lr=1e-2)
    model, opt = amp.initialize(model, opt, opt_level="O2", loss_scale=128.0, verbosity=0)
    train(model, opt, 0, 4)
    result["subclass_master"] = [p.detach().float().cpu().clone() for p in amp.master_params(opt)]
    result["subclass_steps"] = sorted(int(s["step"]) for s in opt.state.values())
    result["fused_attributes"] = attributes(opt)  # amp.initialize given no combine_grad
    result["getters"] = {
        name: describe(getattr(opt, name)())
        for name in (
            "get_optimizer_combined_grads",
            "get_optimizer_combined_grad_masks",
            "get_optimizer_combined_params",
            "get_model_combined_grads",
            "get_model_combined_grad_masks",
            "get_model_combined_params",
        )
    }
    # torch's SGD with combine_grad at O2: no combined parameters.
    model = make_model().npu()
    sgd = torch.optim.SGD(model.parameters(), lr=0.05)
    model, sgd = amp.initialize(
        model, sgd, opt_level="O2", loss_scale=128.0, combine_grad=True, verbosity=0
    )
    train(model, sgd, 0, 1)
    result["sgd_getters"] = {
        name: describe(getattr(sgd, name)())
        for name in ("get_model_combined_params", "get_optimizer_combined_grads")
    }
    result["attributes"] = attributes(sgd)
    torch.save(result, out)


def chosen(names):
    unknown = [n for n in names if n not in OPTIMIZERS]
    if unknown:
        raise SystemExit(f"unknown optimizers {unknown}; known: {list(OPTIMIZERS)}")
    return names or list(OPTIMIZERS)


def main(argv):
    if argv[0] == "write":
        write(argv[1], argv[2] == "1", argv[3], chosen(argv[4:]))
    elif argv[0] == "resume":
        resume(argv[1], argv[2] == "1", argv[3], argv[4], chosen(argv[5:]))
    elif argv[0] == "hooks":
        hooks(argv[1])
    else:
        raise SystemExit(f"unknown scenario {argv[0]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
