"""One description per fused optimizer kind: its state, its argument checks, the runtime
kernel's options and its update in torch operations (the path without the compiled runtime, and
the real NPU's). apex's and torch_npu's NpuFused classes are fronts over these descriptions: each
carries only its package's signature and defaults, and what its package computes otherwise.

One source, two packages: this file is apex's ``apex/optimizers/optimizer_kinds.py`` and
``apexnpu build`` carries the same bytes into the emulator's wheel as
``torch_npu/optim/_optimizer_kinds.py`` (in the source tree a symbolic link). So it imports
torch alone: apex runs on Huawei's torch_npu, which lacks it, and the emulator never imports
apex.

An update works on a ``FlatStep``: the parameter, gradient and state of a bucket as flat
tensors, each original parameter's (offset, shape) in them, and the step being taken.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import torch
import torch.nn.functional as F
from torch.optim.optimizer import required

StateSpec = List[Tuple[str, Optional[float]]]  # (buffer, starting value; None: the first step's)
Segment = Tuple[int, torch.Size]  # (element offset, shape) of one parameter in a bucket


class FlatStep:
    """What an update works on: flat parameter, gradient and state tensors of one dtype,
    ``segments`` (each parameter's place in them), ``params`` (those parameters, for state
    kept per parameter) and ``step``, the step being taken (1 for the first)."""

    def __init__(
        self,
        param: torch.Tensor,
        grad: torch.Tensor,
        state: Dict[str, torch.Tensor],
        segments: Sequence[Segment],
        step: int,
        params: Sequence[torch.Tensor] = (),
    ):
        self.param, self.grad, self.state, self.step = param, grad, state, step
        self.segments = list(segments)
        self.params = list(params)

    @property
    def first_use(self) -> bool:
        return self.step == 1

    def views(self, flat: torch.Tensor) -> List[torch.Tensor]:
        """Views of ``flat`` shaped as the original parameters."""
        return [flat[o : o + shape.numel()].view(shape) for o, shape in self.segments]


def step_count(value) -> int:
    """A per-parameter ``step`` as any torch keeps it (None, int, float, 0-d tensor), an int."""
    if value is None:
        return 0
    if isinstance(value, torch.Tensor):
        return int(value.item())
    return int(value)


# --- argument checks (ValueError naming the optimizer and the argument) -------------------------


def non_negative(owner: str, **values: float) -> None:
    for key, value in values.items():
        if value < 0.0 or math.isnan(value):
            raise ValueError(f"{owner}: invalid {key} value: {value}")


def betas_below_one(owner: str, betas: Sequence[float], names: Sequence[str] = ()) -> None:
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            where = f"{names[i]} parameter" if names else f"beta parameter at index {i}"
            raise ValueError(f"{owner}: invalid {where}: {beta} (must be in [0, 1))")


def _given(value) -> bool:
    """Whether an argument was given (torch.optim's ``required`` sentinel is not a number)."""
    return isinstance(value, (int, float))


# --- the kinds ----------------------------------------------------------------------------------


class Kind:
    """A fused optimizer kind; the methods' ``group`` is a parameter group (its options).

    ``runtime``: the runtime registry's kind (``_apexnpu.OPTIMIZERS``) whose kernel steps it;
    ``class_name``: its NpuFused class in both packages (the registry row's);
    ``step_in_state``: whether each parameter's state holds ``step`` (torch's SGD keeps none);
    ``options``: the constructor's arguments after ``params``, in order, with their defaults, and
    ``package_defaults`` the defaults a package (``"apex"``, ``"torch_npu"``) gives otherwise;
    ``attributes``: the options kept on the optimizer rather than in each parameter group.
    """

    runtime: Optional[str] = None
    class_name = ""
    step_in_state = True
    options: Dict[str, Any] = {}
    package_defaults: Dict[str, Dict[str, Any]] = {}
    attributes: Tuple[str, ...] = ()

    def signature(self, package: str) -> inspect.Signature:
        """``(self, params, <options>)`` with ``package``'s defaults."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        defaults = dict(self.options, **self.package_defaults.get(package, {}))
        return inspect.Signature(
            [inspect.Parameter("self", kind), inspect.Parameter("params", kind)]
            + [inspect.Parameter(name, kind, default=d) for name, d in defaults.items()]
        )

    def check(self, owner: str, options: Dict) -> None:
        """Refuse invalid arguments (``owner``: the class, named in the error)."""

    def state(self, group: Dict) -> StateSpec:
        return []

    def runtime_options(self, group: Dict) -> Optional[Dict]:
        """The runtime kernel's options for ``group``; None where the kernel cannot run it."""
        return None

    def update(self, group: Dict, flat: FlatStep) -> None:
        """One step in torch operations, in place on ``flat``."""
        raise NotImplementedError


def front_init(kind: Kind, package: str, base_init: Callable) -> Callable:
    """A front's ``__init__``, of ``kind.signature(package)``: the options bound (a TypeError
    names a wrong argument), ``kind.attributes`` set on the optimizer, then
    ``base_init(self, params, group_defaults)``."""
    signature = kind.signature(package)

    def __init__(self, params, *args, **kwargs) -> None:
        bound = signature.bind(self, params, *args, **kwargs)
        bound.apply_defaults()
        options = dict(bound.arguments)
        del options["self"], options["params"]
        for name in kind.attributes:
            setattr(self, name, options.pop(name))
        base_init(self, params, options)

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    return __init__


class KindFront:
    """What both packages' ``NpuFusedOptimizerBase`` take from their subclass's ``KIND``: the
    subclass's ``__init__`` (unless it writes its own), ``RUNTIME_KIND`` and ``STEP_IN_STATE``,
    the argument checks (``_check_options``) and the default hooks. The base names its package
    in ``PACKAGE`` (whose signatures and defaults its subclasses take)."""

    KIND: Optional[Kind] = None
    RUNTIME_KIND: Optional[str] = None  # KIND's, unless a subclass sets its own
    STEP_IN_STATE = True  # KIND's: whether each parameter's state holds "step"

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("KIND")
        if kind is None:
            return
        base = next(c for c in cls.__mro__ if "PACKAGE" in c.__dict__)
        if "__init__" not in cls.__dict__:
            cls.__init__ = front_init(kind, base.PACKAGE, base.__init__)
        if "RUNTIME_KIND" not in cls.__dict__:
            cls.RUNTIME_KIND = kind.runtime
        cls.STEP_IN_STATE = kind.step_in_state

    def _check_options(self, defaults: Dict) -> None:
        if self.KIND is not None:
            self.KIND.check(type(self).__name__, defaults)

    def _state_spec(self, group: Dict) -> StateSpec:
        """(name, initial fill) of each state buffer; fill None: made by the first update."""
        return self.KIND.state(group)

    def _runtime_options(self, group: Dict) -> Optional[Dict]:
        """The runtime kernel's options for ``group`` (None: the kernel cannot run it)."""
        return self.KIND.runtime_options(group)

    def _torch_update(self, group: Dict, flat: FlatStep) -> None:
        """One step in torch operations, in place on ``flat`` (of the bucket's dtype)."""
        self.KIND.update(group, flat)

    def _before_group_steps(self) -> None:
        """Run once per step, after combining, before the groups' steps (e.g. a global norm)."""

    @staticmethod
    def _loss_of(closure: Optional[Callable[[], torch.Tensor]]) -> Optional[torch.Tensor]:
        """The closure's loss (None without one), computed with gradients on, as torch's."""
        if closure is None:
            return None
        with torch.enable_grad():
            return closure()

    @torch.no_grad()
    def _zero_grads_outside(self, fused: Set[int], set_to_none: bool = False) -> None:
        """Zero, as torch's ``zero_grad``, the gradients of parameters whose ids are not in
        ``fused`` (None with ``set_to_none``)."""
        for group in self.param_groups:  # type: ignore[attr-defined]
            for p in group["params"]:
                if p.grad is None or id(p) in fused:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()


def fronts_lacking(base: type, defined: Dict[str, Any]) -> Dict[str, type]:
    """A front of ``base`` (a package's NpuFusedOptimizerBase) for each kind whose class is
    not in ``defined`` (the package's namespace), named and documented as its kind: a kind
    that computes alike in both packages needs no module of its own in either."""
    return {
        kind.class_name: type(
            kind.class_name,
            (base,),
            {"KIND": kind, "__doc__": type(kind).__doc__, "__module__": defined["__name__"]},
        )
        for kind in KINDS.values()
        if kind.class_name not in defined
    }


def _options(group: Dict, names: Sequence[str]) -> Dict:
    return {name: group[name] for name in names}


def _with_betas(group: Dict, names: Sequence[str]) -> Dict:
    beta1, beta2 = group["betas"]
    return dict(_options(group, names), beta1=beta1, beta2=beta2)


class Sgd(Kind):
    """torch.optim.SGD: momentum, dampening, Nesterov momentum, L2 weight decay."""

    runtime = "sgd"
    class_name = "NpuFusedSGD"
    step_in_state = False
    options = dict(lr=required, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False)
    package_defaults = {"torch_npu": dict(momentum=0, dampening=0, weight_decay=0)}

    def check(self, owner: str, options: Dict) -> None:
        if _given(options["lr"]):
            non_negative(owner, lr=options["lr"])
        non_negative(owner, momentum=options["momentum"], weight_decay=options["weight_decay"])
        if options["nesterov"] and (options["momentum"] <= 0 or options["dampening"] != 0):
            raise ValueError(f"{owner}: Nesterov momentum requires a momentum and zero dampening")

    def state(self, group: Dict) -> StateSpec:
        # torch makes the momentum buffer at the first step (a copy of the gradient).
        return [("momentum_buffer", None)] if group["momentum"] != 0 else []

    def runtime_options(self, group: Dict) -> Optional[Dict]:
        return _options(group, self.options)

    def update(self, group: Dict, flat: FlatStep) -> None:
        p, d_p = flat.param, flat.grad
        if group["weight_decay"] != 0:
            d_p = d_p.add(p, alpha=group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            buf = flat.state["momentum_buffer"]
            if flat.first_use:
                buf.copy_(d_p)
            else:
                buf.mul_(momentum).add_(d_p, alpha=1 - group["dampening"])
            d_p = d_p.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(d_p, alpha=-group["lr"])


def adam_moments_step(group: Dict, flat: FlatStep, grad: torch.Tensor) -> None:
    """Adam's moments and parameter step, with bias correction (weight decay already applied)."""
    beta1, beta2 = group["betas"]
    exp_avg, exp_avg_sq = flat.state["exp_avg"], flat.state["exp_avg_sq"]
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction2_sqrt = math.sqrt(1 - beta2**flat.step)
    step_size = group["lr"] / (1 - beta1**flat.step)
    if group.get("amsgrad"):
        torch.maximum(flat.state["max_exp_avg_sq"], exp_avg_sq, out=flat.state["max_exp_avg_sq"])
        exp_avg_sq = flat.state["max_exp_avg_sq"]
    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
    flat.param.addcdiv_(exp_avg, denom, value=-step_size)


class Adam(Kind):
    """torch.optim.Adam: L2 weight decay added to the gradient, optional AMSGrad."""

    runtime = "adam"
    class_name = "NpuFusedAdam"
    options = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False)

    def check(self, owner: str, options: Dict) -> None:
        non_negative(
            owner, lr=options["lr"], eps=options["eps"], weight_decay=options["weight_decay"]
        )
        betas_below_one(owner, options["betas"])

    def state(self, group: Dict) -> StateSpec:
        spec: StateSpec = [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]
        if group["amsgrad"]:
            spec.append(("max_exp_avg_sq", 0.0))
        return spec

    def runtime_options(self, group: Dict) -> Optional[Dict]:
        return _with_betas(group, ("lr", "eps", "weight_decay", "amsgrad"))

    def update(self, group: Dict, flat: FlatStep) -> None:
        grad = flat.grad
        if group["weight_decay"] != 0:
            grad = grad.add(flat.param, alpha=group["weight_decay"])
        adam_moments_step(group, flat, grad)


class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay."""

    runtime = "adamw"
    class_name = "NpuFusedAdamW"
    options = dict(Adam.options, weight_decay=1e-2)

    def update(self, group: Dict, flat: FlatStep) -> None:
        flat.param.mul_(1 - group["lr"] * group["weight_decay"])
        adam_moments_step(group, flat, flat.grad)


class Adadelta(Kind):
    """torch.optim.Adadelta."""

    runtime = "adadelta"
    class_name = "NpuFusedAdadelta"
    options = dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0)

    def check(self, owner: str, options: Dict) -> None:
        non_negative(
            owner, lr=options["lr"], eps=options["eps"], weight_decay=options["weight_decay"]
        )
        if not 0.0 <= options["rho"] <= 1.0:
            raise ValueError(f"{owner}: invalid rho value: {options['rho']}")

    def state(self, group: Dict) -> StateSpec:
        return [("square_avg", 0.0), ("acc_delta", 0.0)]

    def runtime_options(self, group: Dict) -> Optional[Dict]:
        return _options(group, ("lr", "rho", "eps", "weight_decay"))

    def update(self, group: Dict, flat: FlatStep) -> None:
        rho, eps = group["rho"], group["eps"]
        grad = flat.grad
        if group["weight_decay"] != 0:
            grad = grad.add(flat.param, alpha=group["weight_decay"])
        square_avg, acc_delta = flat.state["square_avg"], flat.state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        flat.param.add_(delta, alpha=-group["lr"])


class RMSprop(Kind):
    """torch.optim.RMSprop: optional momentum, centered. ``square_avg_start``: the squared
    average's starting value (the TensorFlow variant's differs per package)."""

    runtime = "rmsprop"
    class_name = "NpuFusedRMSprop"
    square_avg_start = 0.0
    options = dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False)
    NUMBERS = ("lr", "alpha", "eps", "weight_decay", "momentum")

    def check(self, owner: str, options: Dict) -> None:
        non_negative(owner, **{k: options[k] for k in self.NUMBERS})

    def state(self, group: Dict) -> StateSpec:
        spec: StateSpec = [("square_avg", self.square_avg_start)]
        if group["momentum"] > 0:
            spec.append(("momentum_buffer", 0.0))
        if group["centered"]:
            spec.append(("grad_avg", 0.0))
        return spec

    def runtime_options(self, group: Dict) -> Optional[Dict]:
        return _options(group, self.options)

    def update(self, group: Dict, flat: FlatStep) -> None:
        alpha = group["alpha"]
        grad = flat.grad
        if group["weight_decay"] != 0:
            grad = grad.add(flat.param, alpha=group["weight_decay"])
        square_avg = flat.state["square_avg"]
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = flat.state["grad_avg"]
            grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        self._momentum_step(group, flat, grad, avg.add_(group["eps"]), lr_in_momentum=False)

    @staticmethod
    def _momentum_step(group: Dict, flat: FlatStep, grad, avg, lr_in_momentum: bool) -> None:
        p, lr = flat.param, group["lr"]
        if group["momentum"] <= 0:
            p.addcdiv_(grad, avg, value=-lr)
            return
        buf = flat.state["momentum_buffer"].mul_(group["momentum"])
        if lr_in_momentum:
            buf.addcdiv_(grad, avg, value=lr)
            p.sub_(buf)
        else:
            buf.addcdiv_(grad, avg)
            p.add_(buf, alpha=-lr)


class RMSpropTF(RMSprop):
    """RMSprop as TensorFlow computes it (timm's RMSpropTF): eps inside the square root,
    averages updated as ``avg += (x - avg) * (1 - alpha)``, weight decay optionally decoupled
    (``decoupled_decay``), the learning rate optionally inside the momentum
    (``lr_in_momentum``). The squared average starts at zero (Ascend's apex; timm and torch_npu
    start it at one: ``RMSpropTF(square_avg_start=1.0)``)."""

    runtime = "rmsprop_tf"
    class_name = "NpuFusedRMSpropTF"
    options = dict(
        RMSprop.options,
        alpha=0.9,
        eps=1e-10,
        momentum=0.0,
        decoupled_decay=False,
        lr_in_momentum=True,
    )

    def __init__(self, square_avg_start: float = 0.0):
        self.square_avg_start = square_avg_start

    def update(self, group: Dict, flat: FlatStep) -> None:
        p, grad = flat.param, flat.grad
        one_minus_alpha = 1.0 - group["alpha"]
        if group["weight_decay"] != 0:
            if group["decoupled_decay"]:
                p.mul_(1.0 - group["lr"] * group["weight_decay"])
            else:
                grad = grad.add(p, alpha=group["weight_decay"])
        square_avg = flat.state["square_avg"]
        square_avg.add_(grad * grad - square_avg, alpha=one_minus_alpha)
        if group["centered"]:
            grad_avg = flat.state["grad_avg"]
            grad_avg.add_(grad - grad_avg, alpha=one_minus_alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).add_(group["eps"]).sqrt_()
        else:
            avg = square_avg.add(group["eps"]).sqrt_()
        self._momentum_step(group, flat, grad, avg, group["lr_in_momentum"])


def _projected_ratio(p, grad, perturb, group: Dict) -> float:
    """AdamP's projection: remove from ``perturb`` (in place) its radial part when ``p`` looks
    scale invariant per output channel, else as a whole; the weight-decay ratio to apply to
    ``p`` (``wd_ratio`` when projected, else 1)."""
    eps, expand = group["eps"], [-1] + [1] * (p.dim() - 1)
    for rows in (p.size(0), 1):
        pv, gv = p.view(rows, -1), grad.view(rows, -1)
        cosine = F.cosine_similarity(gv, pv, dim=1, eps=eps).abs_()
        if cosine.max() < group["delta"] / math.sqrt(pv.size(1)):
            p_n = p / pv.norm(dim=1).view(expand).add_(eps)
            perturb.sub_(p_n * (p_n * perturb).view(rows, -1).sum(dim=1).view(expand))
            return group["wd_ratio"]
    return 1.0


class AdamP(Kind):
    """AdamP (Heo et al., 2021): Adam whose update loses its radial part on scale-invariant
    weights, their weight decay scaled by ``wd_ratio``."""

    runtime = "adamp"
    class_name = "NpuFusedAdamP"
    options = dict(Adam.options, delta=0.1, wd_ratio=0.1, nesterov=False)
    del options["amsgrad"]

    def check(self, owner: str, options: Dict) -> None:
        names = ("lr", "eps", "weight_decay", "delta", "wd_ratio")
        non_negative(owner, **{k: options[k] for k in names})
        betas_below_one(owner, options["betas"])

    def state(self, group: Dict) -> StateSpec:
        return [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]

    def runtime_options(self, group: Dict) -> Optional[Dict]:
        return _with_betas(group, ("lr", "eps", "weight_decay", "delta", "wd_ratio", "nesterov"))

    def update(self, group: Dict, flat: FlatStep) -> None:
        beta1, beta2 = group["betas"]
        grad, p = flat.grad, flat.param
        exp_avg, exp_avg_sq = flat.state["exp_avg"], flat.state["exp_avg_sq"]
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (exp_avg_sq.sqrt() / math.sqrt(1 - beta2**flat.step)).add_(group["eps"])
        step_size = group["lr"] / (1 - beta1**flat.step)
        if group["nesterov"]:
            perturb = (beta1 * exp_avg + (1 - beta1) * grad) / denom
        else:
            perturb = exp_avg / denom
        ratios = [
            _projected_ratio(p_seg, g_seg, u_seg, group) if p_seg.dim() > 1 else 1.0
            for p_seg, g_seg, u_seg in zip(flat.views(p), flat.views(grad), flat.views(perturb))
        ]
        if group["weight_decay"] > 0:
            decay = group["lr"] * group["weight_decay"]
            if all(r == 1.0 for r in ratios):
                p.mul_(1 - decay)
            else:
                for p_seg, ratio in zip(flat.views(p), ratios):
                    p_seg.mul_(1 - decay * ratio)
        p.add_(perturb, alpha=-step_size)


# --- LAMB ---------------------------------------------------------------------------------------

WEIGHT_NORM_MAX = 10.0


class Lamb(Kind):
    """LAMB (You et al., "Large Batch Optimization for Deep Learning") as the widely used
    reference computes it: Adam moments without bias correction, weight decay added to the Adam
    step, each parameter's step scaled by its trust ratio min(||p||, 10) / ||step|| (1 where a
    norm is 0; none with ``adam``). How the step is applied differs per package (the order of
    roundings of each one's NPU kernel): ``adam_step`` and ``trust_ratios`` are the shared part.
    """

    runtime = "lamb"
    class_name = "NpuFusedLamb"
    options = dict(
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-6,
        weight_decay=0,
        adam=False,
        use_global_grad_norm=False,
    )
    attributes = ("adam", "use_global_grad_norm")

    def check(self, owner: str, options: Dict) -> None:
        non_negative(
            owner, lr=options["lr"], eps=options["eps"], weight_decay=options["weight_decay"]
        )
        betas_below_one(owner, options["betas"])

    def state(self, group: Dict) -> StateSpec:
        return [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]

    def runtime_options(self, group: Dict) -> Optional[Dict]:
        return _with_betas(group, ("lr", "eps", "weight_decay"))

    @staticmethod
    def adam_step(
        group: Dict,
        flat: FlatStep,
        grad: torch.Tensor,
        decoupled: bool = True,
        grad_averaging: bool = True,
    ) -> torch.Tensor:
        """The moments updated and the Adam step with its weight decay (``decoupled``: added to
        the step, else to the gradient; ``grad_averaging``: the first moment takes ``1 - beta1``
        of the gradient, else all of it)."""
        beta1, beta2 = group["betas"]
        wd = group["weight_decay"]
        if wd != 0 and not decoupled:
            grad = grad.add(flat.param, alpha=wd)
        exp_avg, exp_avg_sq = flat.state["exp_avg"], flat.state["exp_avg_sq"]
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1 if grad_averaging else 1.0)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step = exp_avg / exp_avg_sq.sqrt().add(group["eps"])
        if wd != 0 and decoupled:
            step.add_(flat.param, alpha=wd)
        return step

    @staticmethod
    def trust_ratios(
        flat: FlatStep, step: torch.Tensor
    ) -> List[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """Per parameter, (weight norm clamped to [0, 10], step norm, trust ratio), in fp32."""
        out = []
        for p_seg, s_seg in zip(flat.views(flat.param), flat.views(step)):
            weight_norm = p_seg.float().pow(2).sum().sqrt().clamp(0, WEIGHT_NORM_MAX)
            step_norm = s_seg.float().pow(2).sum().sqrt()
            if weight_norm == 0 or step_norm == 0:
                ratio = torch.ones((), device=weight_norm.device)
            else:
                ratio = weight_norm / step_norm
            out.append((weight_norm, step_norm, ratio))
        return out

    def update(
        self, group: Dict, flat: FlatStep, grad: Optional[torch.Tensor] = None, adam=False
    ) -> None:
        """``grad`` (default ``flat.grad``) in an Adam step; without ``adam``, per parameter, the
        step times ``-lr * ratio`` added (torch_npu's order; apex's applies it in one pass)."""
        step = self.adam_step(group, flat, flat.grad if grad is None else grad)
        if adam:
            flat.param.add_(step, alpha=-group["lr"])
            return
        ratios = self.trust_ratios(flat, step)
        for p_seg, s_seg, (_, _, ratio) in zip(flat.views(flat.param), flat.views(step), ratios):
            p_seg.add_(s_seg, alpha=-group["lr"] * float(ratio))


# --- BertAdam -----------------------------------------------------------------------------------


# The schedules of HuggingFace's pytorch-pretrained-bert (0.6): ``x`` is the progress
# step / t_total, ``warmup`` the warmup fraction (negative means none).
def warmup_cosine(x: float, warmup: float = 0.002) -> float:
    warmup = max(warmup, 0.0)
    if x < warmup:
        return x / warmup
    return 0.5 * (1.0 + math.cos(math.pi * (x - warmup) / (1.0 - warmup)))


def warmup_constant(x: float, warmup: float = 0.002) -> float:
    warmup = max(warmup, 0.0)
    return x / warmup if x < warmup else 1.0


def warmup_linear(x: float, warmup: float = 0.002) -> float:
    warmup = max(warmup, 0.0)
    return x / warmup if x < warmup else max((x - 1.0) / (warmup - 1.0), 0.0)


def warmup_poly(x: float, warmup: float = 0.002, degree: float = 0.5) -> float:
    """From NVIDIA's BERT example; not in HuggingFace's set (no runtime kernel)."""
    warmup = max(warmup, 0.0)
    return x / warmup if x < warmup else (1.0 - x) ** degree


SCHEDULES: Dict[str, Callable[[float, float], float]] = {
    "warmup_cosine": warmup_cosine,
    "warmup_constant": warmup_constant,
    "warmup_linear": warmup_linear,
    "warmup_poly": warmup_poly,
}


class BertAdam(Kind):
    """BERT's Adam: no bias correction, weight decay added to the update, the learning rate
    scaled by a warmup schedule at progress step / t_total (``t_total=-1``: constant). How
    ``max_grad_norm`` clips differs per package (see the fronts)."""

    runtime = "bert_adam"
    class_name = "NpuFusedBertAdam"
    RUNTIME_SCHEDULES = ("warmup_linear", "warmup_cosine", "warmup_constant")
    options = dict(
        lr=1e-3,
        warmup=-1,
        t_total=-1,
        schedule="warmup_linear",
        b1=0.9,
        b2=0.999,
        e=1e-6,
        weight_decay=0.01,
        max_grad_norm=1.0,
    )
    # Ascend's apex: lr required, torch_npu's b2 and clipping off.
    package_defaults = {"apex": dict(lr=required, b2=0.99, max_grad_norm=-1)}

    def check(self, owner: str, options: Dict) -> None:
        if _given(options["lr"]):
            non_negative(owner, lr=options["lr"])
        if options["schedule"] not in SCHEDULES:
            raise ValueError(
                f"{owner}: invalid schedule {options['schedule']!r}; "
                f"expected one of {', '.join(sorted(SCHEDULES))}"
            )
        warmup = options["warmup"]
        if not 0.0 <= warmup < 1.0 and warmup != -1:
            raise ValueError(f"{owner}: invalid warmup {warmup}: must be in [0, 1) or -1")
        betas_below_one(owner, (options["b1"], options["b2"]), names=("b1", "b2"))
        non_negative(owner, e=options["e"], weight_decay=options["weight_decay"])

    def state(self, group: Dict) -> StateSpec:
        return [("exp_avg", 0.0), ("exp_avg_sq", 0.0)]

    def runtime_options(self, group: Dict) -> Optional[Dict]:
        if group["schedule"] not in self.RUNTIME_SCHEDULES:
            return None
        # The fronts clip before the step: the kernel's own clipping stays off.
        return dict(_options(group, self.options), max_grad_norm=-1.0)

    @staticmethod
    def scheduled_lr(group: Dict, steps_taken: int) -> float:
        """The learning rate of the step after ``steps_taken`` steps, under the group's
        schedule."""
        if group["t_total"] == -1:
            return group["lr"]
        return group["lr"] * SCHEDULES[group["schedule"]](
            steps_taken / group["t_total"], group["warmup"]
        )

    def update(self, group: Dict, flat: FlatStep) -> None:
        grad, p = flat.grad, flat.param
        exp_avg, exp_avg_sq = flat.state["exp_avg"], flat.state["exp_avg_sq"]
        exp_avg.mul_(group["b1"]).add_(grad, alpha=1 - group["b1"])
        exp_avg_sq.mul_(group["b2"]).addcmul_(grad, grad, value=1 - group["b2"])
        update = exp_avg / (exp_avg_sq.sqrt() + group["e"])
        if group["weight_decay"] > 0.0:
            update += group["weight_decay"] * p
        # The product first, then the subtraction (two roundings), as Ascend's apex computes it:
        # a fused add with alpha rounds once and can differ in the last bit.
        p.sub_(update.mul_(self.scheduled_lr(group, flat.step - 1)))


SGD, ADAM, ADAMW, ADADELTA = Sgd(), Adam(), AdamW(), Adadelta()
RMSPROP, RMSPROP_TF, ADAMP, LAMB, BERT_ADAM = RMSprop(), RMSpropTF(), AdamP(), Lamb(), BertAdam()
KINDS: Dict[str, Kind] = {
    k.runtime: k for k in (SGD, ADAM, ADAMW, ADADELTA, RMSPROP, RMSPROP_TF, ADAMP, LAMB, BERT_ADAM)
}
