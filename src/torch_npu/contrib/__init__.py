"""Ascend's contrib helpers, as far as the emulated NPU provides them."""
