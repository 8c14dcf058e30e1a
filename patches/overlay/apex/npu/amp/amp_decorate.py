"""``amp_decorate``: apex's O2 for code written for torch-native AMP (``autocast``,
``GradScaler``), as Baidu AIAK-Training's ``aiak_amp_decorate`` offers it.

    model, optimizer = apex.npu.amp_decorate(model, optimizer)   # or torch.npu.amp.amp_decorate
    model = DDP(model)                                            # after, never before
    scaler = torch.npu.amp.GradScaler()
    ...  # autocast(), scaler.scale(loss).backward(), scaler.unscale_(optimizer),
         # clip_grad_norm_(apex.npu.amp_parameters(optimizer), max_norm),
         # scaler.step(optimizer), scaler.update(): unchanged

The model becomes fp16 (BatchNorm fp32 with ``keep_batchnorm_fp32``), the optimizer steps fp32
master weights, and the GradScaler follows O2's loss scaler (see native_amp_o2): dynamic unless
``loss_scale`` is a number, between ``min_loss_scale`` and ``max_loss_scale``.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Tuple

import torch

from . import native_amp_o2

_WRAPPERS = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)


def _check_not_wrapped(models: Any) -> None:
    for model in models if isinstance(models, (list, tuple)) else [models]:
        if isinstance(model, _WRAPPERS) or type(model).__name__ == "DistributedDataParallel":
            raise RuntimeError(
                f"amp_decorate: the model is already wrapped in {type(model).__name__}; call "
                "amp_decorate on the bare model first and wrap it afterwards: "
                "model, optimizer = amp_decorate(model, optimizer); model = DDP(model)"
            )


def amp_decorate(
    model: Any,
    optimizer: Any,
    keep_batchnorm_fp32: bool = True,
    loss_scale: Optional[Any] = None,
    num_losses: int = 1,
    min_loss_scale: Optional[float] = None,
    max_loss_scale: float = 2.0**24,
) -> Tuple[Any, Any]:
    """Put ``model`` and ``optimizer`` into apex.amp's O2 for a torch-native AMP loop; returns
    them as ``amp.initialize`` does. ``loss_scale`` None is dynamic loss scaling."""
    _check_not_wrapped(model)
    if optimizer is None:
        raise ValueError("amp_decorate: O2 keeps fp32 master weights in the optimizer; pass it")
    from apex import amp

    model, optimizer = amp.initialize(
        model,
        optimizer,
        opt_level="O2",
        keep_batchnorm_fp32=keep_batchnorm_fp32,
        loss_scale="dynamic" if loss_scale is None else loss_scale,
        num_losses=num_losses,
        min_loss_scale=min_loss_scale,
        max_loss_scale=max_loss_scale,
        verbosity=0,
    )
    optimizers = optimizer if isinstance(optimizer, (list, tuple)) else [optimizer]
    native_amp_o2.record(list(optimizers))
    return model, optimizer


def amp_parameters(optimizer: Any) -> Iterator[torch.Tensor]:
    """What to clip after ``amp_decorate``: the fp32 master parameters the optimizer steps."""
    return iter(native_amp_o2.master_params(optimizer))
