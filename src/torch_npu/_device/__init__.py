"""The emulated NPU's devices: which NPU a tensor is on, the tensor makers, tensor methods and
types, storage formats and sizes, memory, streams and checkpoints."""
