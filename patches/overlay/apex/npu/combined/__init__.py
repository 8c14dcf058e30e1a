"""amp's combined gradient buffers (``combine_grad``): unscaling whole buffers
(``grad_buffers``), the combined-tensor getters Ascend's apex puts on optimizers
(``optimizer_getters``), the storage sizes of tensors re-pointed into them
(``storage_sizes``), and re-pointing a tensor of any dtype, bfloat16 included (``repoint``)."""
