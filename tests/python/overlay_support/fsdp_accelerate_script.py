"""A training script as an Ascend user runs it under ``accelerate launch --use_fsdp``:
``import torch_npu``, then the model from a checkpoint and accelerate's own loop, nothing
NPU-specific. The model, data, loop and fp32 reference are deepspeed_accelerate_script.py's (a
tiny LLaMA learning shifted token runs for 8 steps; the reference trains on both ranks' batches
in one process with torch's AdamW). Every rank writes one JSON object, as that script's ranks do:
its device, the map locations the checkpoint was read with, what accelerate prepared (FSDP's
version, the parameters' type and device, the loss scaler's module), the mean loss over the
ranks at each step, and (rank 0) the reference's losses.
"""

from typing import List, Tuple

import torch

import torch_npu  # noqa: F401
from accelerate import Accelerator
from transformers import LlamaForCausalLM

from deepspeed_accelerate_script import make_model, report, train


def from_checkpoint(acc: Accelerator) -> Tuple[LlamaForCausalLM, List[str]]:
    """The model as FSDP recipes load it: the main process saves it (``pytorch_model.bin``),
    then every rank reads it with ``from_pretrained``, which under accelerate's FSDP with
    ``cpu_ram_efficient_loading`` reads the checkpoint with ``map_location="meta"`` first.
    Returns the model and the map locations torch.load was given."""
    if acc.is_main_process:
        make_model().save_pretrained("checkpoint", safe_serialization=False)
    acc.wait_for_everyone()
    load, locations = torch.load, []

    def noting_load(*args, **kwargs):
        locations.append(str(kwargs.get("map_location")))
        return load(*args, **kwargs)

    torch.load = noting_load
    try:
        return LlamaForCausalLM.from_pretrained("checkpoint"), locations
    finally:
        torch.load = load


def main() -> None:
    acc = Accelerator()
    model, locations = from_checkpoint(acc)
    model, losses = train(acc, model)
    plugin = acc.state.fsdp_plugin
    first = next(model.parameters())
    report(
        acc,
        {
            "device": str(acc.device),
            "fsdp": plugin is not None,
            "fsdp_version": getattr(plugin, "fsdp_version", 1),
            "mixed_precision": acc.mixed_precision,
            "model": type(model).__name__,
            "param": type(first).__name__,
            "param_device": str(first.device),
            "scaler": type(acc.scaler).__module__ if acc.scaler is not None else None,
            "losses": losses,
            "load_locations": locations,
        },
    )


if __name__ == "__main__":
    main()
