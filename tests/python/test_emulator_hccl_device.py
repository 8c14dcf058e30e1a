"""hccl named as torch 2.x names a device's backend: ``init_process_group("npu:hccl")``, and
``device_id=torch.device("npu", N)`` binding the group to that NPU (``bound_device_id``, which
torch's barrier and the subgroups read), as torch_npu's hccl is registered for the "npu" device.
With torch_npu.contrib.transfer_to_npu, a CUDA script's ``backend="cuda:nccl"`` and
``device_id=torch.device("cuda:N")`` make the same group. Real processes on gloo (loopback), 2
and 4 ranks.

torch 1.13 has neither device-qualified backends nor device_id: there the same calls fail with
torch 1.13's own errors, as they do with Huawei's torch_npu 1.x.
"""

import json
import os

import pytest
import torch

import overlay_support
from overlay_support import ranks

WORKER = os.path.join(os.path.dirname(overlay_support.__file__), "hccl_worker.py")
TORCH2 = int(torch.__version__.split(".")[0]) >= 2

# form -> (backend torch reports, whether the group is bound to the rank's NPU)
FORMS = {
    "npu_hccl": ("npu:hccl", False),
    "hccl_device_id": ("hccl", True),
    "npu_hccl_device_id": ("npu:hccl", True),
    "device_id": ("hccl", True),  # no backend: torch takes the NPU's, hccl
    "cuda_nccl": ("npu:hccl", True),  # transfer_to_npu reads cuda as npu and nccl as hccl
}


def run(forms, world):
    """Each form's result per rank: one launch, one group after another."""
    env = overlay_support.overlay_env()
    for name in ("APEXNPU_HCCL_STRICT", "GLOO_SOCKET_IFNAME"):
        env.pop(name, None)
    env["HCCL_TEST_PORTS"] = ",".join(str(ranks.free_port()) for _ in forms)
    results = ranks.launch([WORKER, "bound:" + ",".join(forms)], world, env, timeout=600)
    for r in results:
        assert r.returncode == 0 and r.stdout.strip(), r
    return [json.loads(r.stdout.strip().splitlines()[-1]) for r in results]


def check_bound(form, world, out):
    backend, bound = FORMS[form]
    for rank, by_form in enumerate(out):
        got = by_form[form]
        assert "error" not in got, got.get("trace", got)
        npu = f"npu:{rank}" if bound else None
        assert got == {
            "backend": backend,
            "sub_backend": backend,
            "bound": npu,
            "sub_bound": npu,
            "sum": [world * (world + 1) / 2] * 2,
            "sum_device": f"npu:{rank}",
            "float64_refused": "hccl",
        }, form


@pytest.mark.skipif(not TORCH2, reason="torch 1.13 takes no device_id nor 'device:backend'")
def test_groups_named_by_their_device_are_hccl_bound_to_that_npu_2_ranks():
    forms = ["npu_hccl", "hccl_device_id", "device_id", "cuda_nccl"]  # transfer_to_npu stays
    out = run(forms, 2)
    for form in forms:
        check_bound(form, 2, out)


@pytest.mark.skipif(not TORCH2, reason="torch 1.13 takes no device_id nor 'device:backend'")
def test_groups_named_by_their_device_are_hccl_bound_to_that_npu_4_ranks():
    check_bound("npu_hccl_device_id", 4, run(["npu_hccl_device_id"], 4))


@pytest.mark.skipif(TORCH2, reason="torch 2.x takes them (the tests above)")
def test_torch_1_refuses_them_with_its_own_errors():
    # Refused before the rendezvous: one rank alone shows it.
    forms = sorted(FORMS)
    (out,) = run(forms, 1)
    for form in forms:
        got = out[form]
        if form == "npu_hccl":
            assert (got["error"], got["message"]) == ("ValueError", "Invalid backend: 'npu:hccl'")
        else:
            assert got["error"] == "TypeError", (form, got)
            assert got["message"].endswith("got an unexpected keyword argument 'device_id'")
