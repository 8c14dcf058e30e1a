"""The flags DeepSpeed reduces over hccl (its fp16 overflow flag is a uint8 all-reduced with MAX),
on both torches, 2 ranks: torch_npu all-reduces and reduces uint8 and bool tensors by way of
int32 (a bool sum is an or, as torch_npu maps it to max), though HCCL itself reduces neither, so
the emulated hccl takes them there too (reduce_scatter still refuses them, as torch_npu)."""

import json
import os

import overlay_support
from overlay_support import ranks

WORKER = os.path.join(os.path.dirname(overlay_support.__file__), "deepspeed_flags_worker.py")


def test_uint8_and_bool_reductions_as_torch_npu():
    env = overlay_support.overlay_env()
    env.pop("APEXNPU_HCCL_STRICT", None)
    results = ranks.launch([WORKER], 2, env, timeout=300)
    for r in results:
        assert r.returncode == 0, r
    got = [json.loads(r.stdout.strip().splitlines()[-1]) for r in results]
    for out in got:
        for dtype, one in (("uint8", 1), ("bool", True)):
            assert out[f"all_reduce_SUM_{dtype}"] == [
                one,
                2 if dtype == "uint8" else True,
                0 * one,
                one,
            ]
            assert out[f"all_reduce_MAX_{dtype}"] == [one, one, 0 * one, one]
            assert out[f"all_reduce_MIN_{dtype}"] == [0 * one, one, 0 * one, 0 * one]
        assert out["all_reduce_SUM_uint8_wraps"] == [144]  # 400 modulo 256
    assert got[0]["reduce_uint8"] == [2, 1] and got[0]["reduce_bool"] == [True, True]
