"""Per-parameter reference implementations, written from the published algorithms, of the fused
optimizers that have no torch.optim counterpart: AdamP, BertAdam, LAMB and RMSpropTF."""

import math

import torch
import torch.nn.functional as F


def _adam_moments(state, p, grad, beta1, beta2):
    """Adam's first and second moments of p (zeros, and step 0, at the first use), updated in
    place from grad; returns them."""
    if not state:
        state["step"] = 0
        state["exp_avg"] = torch.zeros_like(p)
        state["exp_avg_sq"] = torch.zeros_like(p)
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m.mul_(beta1).add_(grad * (1 - beta1))
    v.mul_(beta2).add_(grad * grad * (1 - beta2))
    return m, v


class _PerParam(torch.optim.Optimizer):
    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self.update(group, p, p.grad, self.state[p])


class AdamPReference(_PerParam):
    """Heo et al. 2021, Algorithm 2 (with the authors' projection test)."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        delta=0.1,
        wd_ratio=0.1,
        nesterov=False,
    ):
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                delta=delta,
                wd_ratio=wd_ratio,
                nesterov=nesterov,
            ),
        )

    def update(self, group, p, grad, state):
        beta1, beta2 = group["betas"]
        m, v = _adam_moments(state, p, grad, beta1, beta2)
        state["step"] += 1
        denom = (v.sqrt() / math.sqrt(1 - beta2 ** state["step"])).add_(group["eps"])
        step_size = group["lr"] / (1 - beta1 ** state["step"])
        perturb = ((beta1 * m + (1 - beta1) * grad) if group["nesterov"] else m) / denom
        ratio = 1.0
        if p.dim() > 1:
            for view in (lambda x: x.view(x.size(0), -1), lambda x: x.view(1, -1)):
                cos = F.cosine_similarity(view(grad), view(p), dim=1, eps=group["eps"]).abs()
                if cos.max() < group["delta"] / math.sqrt(view(p).size(1)):
                    shape = [-1] + [1] * (p.dim() - 1)
                    unit = p / view(p).norm(dim=1).view(shape).add(group["eps"])
                    perturb = perturb - unit * view(unit * perturb).sum(dim=1).view(shape)
                    ratio = group["wd_ratio"]
                    break
        if group["weight_decay"] > 0:
            p.mul_(1 - group["lr"] * group["weight_decay"] * ratio)
        p.add_(perturb * -step_size)


class BertAdamReference(torch.optim.Optimizer):
    """BertAdam as Ascend's apex runs it (its NpuFusedBertAdam, per parameter): no bias
    correction, decay in the update, warmup schedule; with max_grad_norm > 0 every gradient is
    divided by the global L2 norm when that norm is finite and above 1. State as Ascend keeps it:
    ``exp_avg``, ``exp_avg_sq`` and a ``step`` that Ascend reads when it (re)combines the state
    and never writes back (its running count lives beside the state, here in ``_steps``)."""

    def __init__(
        self,
        params,
        lr,
        warmup=-1,
        t_total=-1,
        schedule="warmup_linear",
        b1=0.9,
        b2=0.99,
        e=1e-6,
        weight_decay=0.01,
        max_grad_norm=-1,
    ):
        super().__init__(
            params,
            dict(
                lr=lr,
                warmup=warmup,
                t_total=t_total,
                schedule=schedule,
                b1=b1,
                b2=b2,
                e=e,
                weight_decay=weight_decay,
                max_grad_norm=max_grad_norm,
            ),
        )
        self._steps = None

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self._steps = None  # Ascend re-combines its state, taking the first parameter's step

    @staticmethod
    def schedule(name, x, warmup):
        # HuggingFace pytorch-pretrained-bert 0.6 schedules; a negative warmup means none.
        warmup = max(warmup, 0.0)
        if x < warmup:
            return x / warmup
        if name == "warmup_linear":
            return max((x - 1.0) / (warmup - 1.0), 0.0)
        if name == "warmup_cosine":
            return 0.5 * (1.0 + math.cos(math.pi * (x - warmup) / (1.0 - warmup)))
        if name == "warmup_constant":
            return 1.0
        return (1.0 - x) ** 0.5

    @torch.no_grad()
    def step(self):
        with_grad = [[p for p in g["params"] if p.grad is not None] for g in self.param_groups]
        for params in with_grad:
            for p in params:
                if not self.state[p]:
                    self.state[p].update(
                        step=0, exp_avg=torch.zeros_like(p), exp_avg_sq=torch.zeros_like(p)
                    )
        if self._steps is None:
            self._steps = [int(self.state[ps[0]]["step"]) if ps else 0 for ps in with_grad]
        if any(g["max_grad_norm"] > 0 for g in self.param_groups):
            norm = math.sqrt(
                sum(float((p.grad.double() ** 2).sum()) for ps in with_grad for p in ps)
            )
            if math.isfinite(norm) and norm > 1:
                for group, ps in zip(self.param_groups, with_grad):
                    if group["max_grad_norm"] > 0:
                        for p in ps:
                            p.grad.div_(norm)
        for index, (group, params) in enumerate(zip(self.param_groups, with_grad)):
            lr = group["lr"]
            if group["t_total"] != -1:
                lr = lr * self.schedule(
                    group["schedule"], self._steps[index] / group["t_total"], group["warmup"]
                )
            for p in params:
                state = self.state[p]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.mul_(group["b1"]).add_(p.grad * (1 - group["b1"]))
                v.mul_(group["b2"]).add_(p.grad * p.grad * (1 - group["b2"]))
                update = m / (v.sqrt() + group["e"])
                if group["weight_decay"] > 0:
                    update = update + group["weight_decay"] * p
                p.sub_(lr * update)
            self._steps[index] += 1


def assert_bert_schedules(schedules):
    """``schedules`` (a module's ``SCHEDULES``, which BERT recipes read) has the four warmup
    schedules by name, those of ``BertAdamReference.schedule`` (warmup_poly has no reference)."""
    assert set(schedules) == {"warmup_cosine", "warmup_constant", "warmup_linear", "warmup_poly"}
    for name in ("warmup_cosine", "warmup_constant", "warmup_linear"):
        for warmup in (-1, 0.1, 0.25):
            for x in (0.0, 0.05, 0.1, 0.3, 0.5, 0.99, 1.0, 1.5):
                want = BertAdamReference.schedule(name, x, warmup)
                got = schedules[name](x, warmup)
                assert abs(got - want) <= 1e-15, (name, warmup, x, got, want)


class LambReference(torch.optim.Optimizer):
    """LAMB in the form of the common reference code (Ascend's apex.optimizers.Lamb): no bias
    correction, ‖w‖ clamped to 10; each parameter's state keeps its last ``weight_norm``,
    ``adam_norm`` and ``trust_ratio`` beside the moments. ``global_clip`` scales all gradients by
    1 / max(global L2 norm, 1) first; ``max_grad_norm`` by max_grad_norm / max(norm,
    max_grad_norm). NVIDIA's FusedLAMB options: ``adam_w_mode=False`` adds the weight decay to
    the gradient instead of the update, ``grad_averaging=False`` takes the whole gradient into the
    first moment."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-6,
        weight_decay=0,
        adam=False,
        global_clip=False,
        max_grad_norm=0.0,
        adam_w_mode=True,
        grad_averaging=True,
    ):
        self.adam = adam
        self.max_grad_norm = 1.0 if global_clip else max_grad_norm
        self.adam_w_mode, self.grad_averaging = adam_w_mode, grad_averaging
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        grads = [p.grad for g in self.param_groups for p in g["params"] if p.grad is not None]
        if self.max_grad_norm > 0:
            norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
            for g in grads:
                g.div_(max(norm, self.max_grad_norm) / self.max_grad_norm)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                grad = p.grad
                if not self.adam_w_mode:
                    grad = grad + group["weight_decay"] * p
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.mul_(beta1).add_(grad * ((1 - beta1) if self.grad_averaging else 1.0))
                v.mul_(beta2).add_(grad * grad * (1 - beta2))
                state["step"] += 1
                r = m / (v.sqrt() + group["eps"])
                if group["weight_decay"] != 0 and self.adam_w_mode:
                    r = r + group["weight_decay"] * p
                w_norm = min(float(p.norm()), 10.0)
                r_norm = float(r.norm())
                trust = 1.0 if (w_norm == 0 or r_norm == 0) else w_norm / r_norm
                state["weight_norm"] = torch.tensor(w_norm)
                state["adam_norm"] = torch.tensor(r_norm)
                state["trust_ratio"] = torch.tensor(trust)
                if self.adam:
                    trust = 1.0
                p.sub_(group["lr"] * trust * r)


class RMSpropTFReference(_PerParam):
    """TensorFlow's RMSprop: eps inside the sqrt, optional decoupled decay and learning rate
    inside the momentum. ms starts at 0 as Ascend's apex starts it; torch_npu's and timm's start
    at 1 (``square_avg_start``)."""

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.9,
        eps=1e-10,
        weight_decay=0,
        momentum=0.0,
        centered=False,
        decoupled_decay=False,
        lr_in_momentum=True,
        square_avg_start=0.0,
    ):
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
                decoupled_decay=decoupled_decay,
                lr_in_momentum=lr_in_momentum,
            ),
        )
        self.square_avg_start = square_avg_start

    def update(self, group, p, grad, state):
        if not state:
            state["step"] = 0
            state["square_avg"] = torch.full_like(p, self.square_avg_start)
            state["momentum_buffer"] = torch.zeros_like(p)
            state["grad_avg"] = torch.zeros_like(p)
        state["step"] += 1
        lr, rate = group["lr"], 1 - group["alpha"]
        if group["weight_decay"]:
            if group["decoupled_decay"]:
                p.mul_(1 - lr * group["weight_decay"])
            else:
                grad = grad + group["weight_decay"] * p
        ms = state["square_avg"]
        ms.add_((grad * grad - ms) * rate)
        if group["centered"]:
            mg = state["grad_avg"]
            mg.add_((grad - mg) * rate)
            denom = (ms - mg * mg + group["eps"]).sqrt()
        else:
            denom = (ms + group["eps"]).sqrt()
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            if group["lr_in_momentum"]:
                buf.mul_(group["momentum"]).add_(lr * grad / denom)
                p.sub_(buf)
            else:
                buf.mul_(group["momentum"]).add_(grad / denom)
                p.sub_(lr * buf)
        else:
            p.sub_(lr * grad / denom)
