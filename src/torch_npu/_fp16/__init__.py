"""fp16 arithmetic of the emulated NPU: one torch dispatch mode with a general and a fast path,
the NPU's saturation and its float status."""
