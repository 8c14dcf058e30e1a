"""torch.distributed on the emulated NPU: the hccl backend and DDP over NPU modules."""
