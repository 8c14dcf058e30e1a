"""What apex.optimizers' NpuFused optimizers lean on: ``APEXNPU_FUSED_OPTIMIZER``'s switch of
torch.optim's classes to them (``fused_optimizer_switch``), gradient-norm clipping over combined
buffers (``fused_clip``), and ``Module.zero_grad`` kept from dropping fused gradients
(``grad_memory``)."""
