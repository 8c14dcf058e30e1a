"""What apex.amp gets on the NPU: the options amp.initialize adds (``amp_options``), the
low-precision dtype it computes in, fp16 or bf16, and bf16's checks (``low_precision``),
unscaling with overflow detection (``loss_scaling``, over the device's ``float_status``), fp32
master weights in checkpoints (``master_checkpoint``) and copied into the fp16/bf16 model after
each step (``master_copy``), and O2 for torch-native AMP code (``amp_decorate``, linked to
``torch.npu.amp.GradScaler`` by ``native_amp_o2``)."""
