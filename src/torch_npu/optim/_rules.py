"""Update rules without the compiled runtime, on fp32 flat tensors (``FlatWork``).

Where torch.optim has the optimizer (SGD, Adam, AdamW, Adadelta, RMSprop) its own step runs over
the flat tensors (``torch_optim_step``): the math is torch's, not a second copy of it. BertAdam
runs torch_npu's own ``npu_bert_apply_adam`` operator. LAMB, AdamP and TensorFlow's RMSprop
have no torch counterpart and are written here (the runtime's kernels implement the same rules).
"""

from __future__ import annotations

import inspect
import math
from typing import Dict, List

import torch
import torch.nn.functional as F

_STEP_IS_TENSOR: Dict[type, bool] = {}


def _step_is_tensor(cls: type, kwargs: Dict) -> bool:
    """Whether this torch's ``cls`` keeps ``state['step']`` as a tensor (found by one step on a
    one-element tensor: torch 1.13 and 2.x differ per optimizer)."""
    if cls not in _STEP_IS_TENSOR:
        w = torch.zeros(1)
        w.grad = torch.zeros(1)
        probe = cls([w], **kwargs)
        probe.step()
        _STEP_IS_TENSOR[cls] = isinstance(probe.state[w].get("step"), torch.Tensor)
    return _STEP_IS_TENSOR[cls]


def torch_optim_step(cls: type, group: Dict, work, step_in_state: bool = True) -> Dict:
    """One step of torch.optim's ``cls`` over ``work`` with ``group``'s hyper-parameters; the
    state tensors torch created (name -> flat tensor) are returned for the caller to keep."""
    accepted = inspect.signature(cls.__init__).parameters
    kwargs = {k: v for k, v in group.items() if k != "params" and k in accepted}
    if "foreach" in accepted:
        kwargs["foreach"] = False  # one flat tensor: nothing to batch
    param = work.param
    param.grad = work.grad
    try:
        shadow = cls([param], **kwargs)
        state = dict(work.state)
        if step_in_state:
            taken = work.step - 1
            state["step"] = torch.tensor(float(taken)) if _step_is_tensor(cls, kwargs) else taken
        if state:
            shadow.state[param] = state
        shadow.step()
        after = shadow.state[param]
    finally:
        param.grad = None
    return {
        name: t
        for name, t in after.items()
        if name != "step"
        and isinstance(t, torch.Tensor)
        and (name not in work.state or t.data_ptr() != work.state[name].data_ptr())
    }


# --- LAMB (torch_npu's NpuFusedLamb) ----------------------------------------------------------

WEIGHT_NORM_MAX = 10.0


def lamb_update(group: Dict, work, adam: bool, global_grad_norm: float) -> None:
    """Adam moments without bias correction, decay added to the Adam step, and the step scaled
    per parameter by the trust ratio min(||p||, 10) / ||step|| (1 when a norm is 0, or with
    ``adam``); gradients divided by ``global_grad_norm`` when it exceeds 1."""
    beta1, beta2 = group["betas"]
    grad = work.grad / global_grad_norm if global_grad_norm > 1.0 else work.grad
    exp_avg, exp_avg_sq = work.state["exp_avg"], work.state["exp_avg_sq"]
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    adam_step = exp_avg / exp_avg_sq.sqrt().add(group["eps"])
    if group["weight_decay"] != 0:
        adam_step.add_(work.param, alpha=group["weight_decay"])
    if adam:
        work.param.add_(adam_step, alpha=-group["lr"])
        return
    for p, s in zip(work.views(work.param), work.views(adam_step)):
        weight_norm = float(p.norm().clamp(0, WEIGHT_NORM_MAX))
        adam_norm = float(s.norm())
        ratio = 1.0 if weight_norm == 0 or adam_norm == 0 else weight_norm / adam_norm
        p.add_(s, alpha=-group["lr"] * ratio)


# --- AdamP (Heo et al., 2021) -----------------------------------------------------------------


def _projected(
    p: torch.Tensor, grad: torch.Tensor, perturb: torch.Tensor, delta: float, eps: float
) -> bool:
    """Remove the radial part of ``perturb`` (in place) when ``p`` looks scale invariant per
    output channel, else as a whole; whether it did."""
    expand = [-1] + [1] * (p.dim() - 1)
    for rows in (p.shape[0], 1):
        pv, gv = p.reshape(rows, -1), grad.reshape(rows, -1)
        cosine = F.cosine_similarity(gv, pv, dim=1, eps=eps).abs()
        if float(cosine.max()) < delta / math.sqrt(pv.shape[1]):
            unit = p / pv.norm(dim=1).add(eps).view(expand)
            radial = (unit * perturb).reshape(rows, -1).sum(dim=1)
            perturb.sub_(unit * radial.view(expand))
            return True
    return False


def adamp_update(group: Dict, work) -> None:
    beta1, beta2 = group["betas"]
    grad, param = work.grad, work.param
    exp_avg, exp_avg_sq = work.state["exp_avg"], work.state["exp_avg_sq"]
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    denom = (exp_avg_sq.sqrt() / math.sqrt(1 - beta2**work.step)).add_(group["eps"])
    step_size = group["lr"] / (1 - beta1**work.step)
    if group["nesterov"]:
        perturb = (beta1 * exp_avg + (1 - beta1) * grad) / denom
    else:
        perturb = exp_avg / denom
    ratios: List[float] = []
    for p, g, u in zip(work.views(param), work.views(grad), work.views(perturb)):
        projected = p.dim() > 1 and _projected(p, g, u, group["delta"], group["eps"])
        ratios.append(group["wd_ratio"] if projected else 1.0)
    if group["weight_decay"] > 0:
        for p, ratio in zip(work.views(param), ratios):
            p.mul_(1 - group["lr"] * group["weight_decay"] * ratio)
    param.add_(perturb, alpha=-step_size)


# --- RMSprop as TensorFlow computes it (timm's RMSpropTF) --------------------------------------


def rmsprop_tf_update(group: Dict, work) -> None:
    """The squared average starts at one, eps inside the square root, averages updated as
    ``avg += (x - avg) (1 - alpha)``, optional decoupled decay, lr inside the momentum."""
    param, grad, lr = work.param, work.grad, group["lr"]
    one_minus_alpha = 1.0 - group["alpha"]
    if group["weight_decay"] != 0:
        if group["decoupled_decay"]:
            param.mul_(1.0 - lr * group["weight_decay"])
        else:
            grad = grad.add(param, alpha=group["weight_decay"])
    square_avg = work.state["square_avg"]
    square_avg.add_(grad * grad - square_avg, alpha=one_minus_alpha)
    if group["centered"]:
        grad_avg = work.state["grad_avg"]
        grad_avg.add_(grad - grad_avg, alpha=one_minus_alpha)
        avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).add_(group["eps"]).sqrt_()
    else:
        avg = square_avg.add(group["eps"]).sqrt_()
    if group["momentum"] > 0:
        buf = work.state["momentum_buffer"]
        if group["lr_in_momentum"]:
            buf.mul_(group["momentum"]).addcdiv_(grad, avg, value=lr)
            param.sub_(buf)
        else:
            buf.mul_(group["momentum"]).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
    else:
        param.addcdiv_(grad, avg, value=-lr)


# --- BertAdam's learning-rate schedules (pytorch-pretrained-bert 0.6, as the runtime's) ---------


def _warmup(x: float, warmup: float):
    warmup = max(warmup, 0.0)
    return (x / warmup) if x < warmup else None


def warmup_cosine(x: float, warmup: float = 0.002) -> float:
    w = _warmup(x, warmup)
    return (
        w
        if w is not None
        else 0.5 * (1.0 + math.cos(math.pi * (x - max(warmup, 0.0)) / (1.0 - max(warmup, 0.0))))
    )


def warmup_constant(x: float, warmup: float = 0.002) -> float:
    w = _warmup(x, warmup)
    return w if w is not None else 1.0


def warmup_linear(x: float, warmup: float = 0.002) -> float:
    w = _warmup(x, warmup)
    return w if w is not None else max((x - 1.0) / (max(warmup, 0.0) - 1.0), 0.0)


def warmup_poly(x: float, warmup: float = 0.002, degree: float = 0.5) -> float:
    w = _warmup(x, warmup)
    return w if w is not None else (1.0 - x) ** degree


SCHEDULES = {
    "warmup_cosine": warmup_cosine,
    "warmup_constant": warmup_constant,
    "warmup_linear": warmup_linear,
    "warmup_poly": warmup_poly,
}
