"""Gradient communication: the variables that switch it (``comm_settings``) and the torch
communication hooks they pick (``comm_hooks``) over a counted flat group or the hierarchical one
(``counted_group``, ``hierarchical_group``), installed on torch DDP (``torch_ddp``); and amp's
``combine_ddp`` (``combined_ddp``), which averages slices of the combined gradient buffers as
backward fills them (``ddp_overlap``, ``slice_bucket``) and moves any dtype through HCCL
(``collective_dtypes``)."""
