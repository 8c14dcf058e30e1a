"""apex.amp in bfloat16 on an emulated Ascend 910B, end to end on the installed wheels (as
test_overlay_amp_e2e.py: real upstream Apex + our patch and overlay, and the torch_npu
emulator, built by apexnpu and installed into a venv over the torch of the Python running the
test).

O2 with cast_model_type=torch.bfloat16 (O5) and O1 with patch_torch_functions_type=
torch.bfloat16 (O4) train like fp32, with fp32 master weights and an fp32 state_dict; loss
scaling is static 1 by default, dynamic when asked; checkpoints resume; a 910 refuses bf16.

Needs APEXNPU_TEST_UPSTREAM (an NVIDIA Apex repository) and `apexnpu gen`; skips with a message
otherwise. APEXNPU_TEST_APEX_TREE may name an already generated tree instead (development).
The scenarios are overlay_support/amp_scenarios/bf16_*.py, run by the venv's interpreter.
"""

import json
import os
import subprocess
import sys

import pytest

from overlay_support import wheels

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "overlay_support", "amp_scenarios")
PYTHON = sys.executable  # the wheels are built for it, the venv sees its torch
CHIP_VARIABLES = (
    "APEXNPU_SOC_VERSION",
    "APEXNPU_INF_NAN_MODE",
    "INF_NAN_MODE_ENABLE",
    "INF_NAN_MODE_FORCE_DISABLE",
    "APEXNPU_EXACT_RESUME",
    "PYTHONPATH",
)


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory):
    return wheels.amp_venv(tmp_path_factory, "amp-bf16")


def run(vpy, script, *args, cwd, chip="Ascend910B1", **env):
    """Run a scenario on ``chip`` (the chip's own overflow mode unless ``env`` says); returns
    the last line it printed."""
    environ = {k: v for k, v in os.environ.items() if k not in CHIP_VARIABLES}
    environ.update(APEXNPU_SOC_VERSION=chip, **env)
    proc = subprocess.run(
        [vpy, os.path.join(SCENARIOS, script)] + [str(a) for a in args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=str(cwd),
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


def levels(vpy, cwd, how, loss_scale="default", combine_grad=0, fused=0, lr="3e-4"):
    return json.loads(run(vpy, "bf16_levels.py", how, loss_scale, combine_grad, fused, lr, cwd=cwd))


@pytest.fixture(scope="module")
def fp32_losses(venv_python, tmp_path_factory):
    result = levels(venv_python, tmp_path_factory.mktemp("fp32"), "fp32")
    assert set(result["dtypes"].values()) == {"torch.float32"}
    return result["losses"]


def max_difference(losses, reference):
    assert len(losses) == len(reference) == 30
    return max(abs(a - b) for a, b in zip(losses, reference))


def fall(losses):
    return losses[0] - losses[-1]


# At lr 3e-4 an SGD step moves most weights by less than a bf16 ulp: only fp32 master weights
# keep those updates. Measured over 30 steps: within 6e-4 of fp32's loss at every step with
# masters (O1/O4 keep the model fp32, O2/O5 fp32 masters), 1.1e-2 with bf16 weights stepped in
# place; the loss falls by 0.0190 in fp32, 0.0189-0.0190 with masters, 0.0080 without.
LOSS_TOLERANCE = 2e-3
FALL_TOLERANCE = 0.1  # relative to fp32's fall

CONV_AND_LINEAR = ["0.weight", "5.weight", "5.bias"]
BATCHNORM = ["1.weight", "1.bias"]

TRAIN_CASES = [  # how, loss_scale, combine_grad, fused (NpuFusedSGD)
    ("O5", "default", 0, 0),
    ("O4", "default", 0, 1),
    ("O2-bf16", "dynamic", 1, 1),
    ("O1-bf16", "128", 1, 0),
]


@pytest.mark.parametrize("how, loss_scale, combine_grad, fused", TRAIN_CASES)
def test_bf16_trains_like_fp32_with_fp32_master_weights(
    venv_python, fp32_losses, tmp_path, how, loss_scale, combine_grad, fused
):
    result = levels(venv_python, tmp_path, how, loss_scale, combine_grad, fused)
    assert max_difference(result["losses"], fp32_losses) < LOSS_TOLERANCE
    assert abs(fall(result["losses"]) - fall(fp32_losses)) < FALL_TOLERANCE * fall(fp32_losses)
    # The convolution and the linear layer computed in bf16.
    assert result["computed"] == {"0": "torch.bfloat16", "5": "torch.bfloat16"}
    dtypes, casts_model = result["dtypes"], how in ("O5", "O2-bf16")
    if casts_model:
        assert {dtypes[n] for n in CONV_AND_LINEAR} == {"torch.bfloat16"}
        assert {dtypes[n] for n in BATCHNORM} == {"torch.float32"}  # keep_batchnorm_fp32
    else:
        assert set(dtypes.values()) == {"torch.float32"}  # O1/O4 cast around functions
    assert result["masters"] == ["torch.float32"]  # what the optimizer steps
    assert set(result["state_dict"].values()) == {"torch.float32"}  # O2's state_dict hook
    assert set(result["buffers"].values()) == {"torch.float32"}
    assert result["opt_level"] == how.split("-")[0]
    if casts_model:
        assert result["cast_model_type"] == "torch.bfloat16"
    else:
        assert result["patch_torch_functions_type"] == "torch.bfloat16"
    if combine_grad:
        # The gradients stay in combined buffers, made once: at O2/O5 the bf16 model gradients
        # in a bf16 buffer beside the fp32 masters' (BatchNorm's fp32 gradients in the second);
        # at O1/O4 the model is fp32.
        combined = result["combined"]
        assert combined["builds"] == 1
        if casts_model:
            assert combined["model"] == ["torch.bfloat16", "torch.float32"]
            assert combined["optimizer"] == ["torch.float32", "torch.float32"]
            assert combined["bf16_grads_inside"]
        else:
            assert combined["model"] == combined["optimizer"] == ["torch.float32"]
    # bf16's default is a static scale of 1; a dynamic one stays at 2^16 (no overflow in 30
    # steps, scale_window 2000); a number is kept.
    expected = {"default": 1.0, "dynamic": 65536.0, "128": 128.0}[loss_scale]
    assert result["scale"] == expected
    assert result["loss_scale"] == ("dynamic" if loss_scale == "dynamic" else expected)


def test_the_tolerance_tells_bf16_weights_without_masters_apart(venv_python, fp32_losses, tmp_path):
    # O3 in bf16 steps the bf16 weights themselves: the small updates are lost.
    result = levels(venv_python, tmp_path, "O3-bf16")
    assert result["masters"] == ["torch.bfloat16", "torch.float32"]
    assert max_difference(result["losses"], fp32_losses) > 3 * LOSS_TOLERANCE
    assert fall(result["losses"]) < (1 - 3 * FALL_TOLERANCE) * fall(fp32_losses)


@pytest.mark.parametrize(
    "level, combine_grad, mode", [("O5", 1, "inf_nan"), ("O4", 0, "saturation")]
)
def test_dynamic_loss_scaling_skips_overflows_in_bf16(
    venv_python, tmp_path, level, combine_grad, mode
):
    # The 910B's own INF/NAN mode, where torch_npu refuses to read the float status (the
    # scenario makes the emulator's refuse as Huawei's does), and saturation forced back on.
    out = json.loads(
        run(
            venv_python,
            "bf16_overflow.py",
            level,
            combine_grad,
            cwd=tmp_path,
            APEXNPU_INF_NAN_MODE="1" if mode == "inf_nan" else "0",
        )
    )
    assert out["inf_nan"] == (mode == "inf_nan")
    events = out["events"]
    # As the fp16 test: init 2^10; overflow -> 512; 3 clean steps -> 1024, 3 more -> 2048 (the
    # max), stays; then overflows halve it down to the min 256 and no further.
    assert [e["scale"] for e in events] == [
        1024,
        512,
        512,
        512,
        1024,
        1024,
        1024,
        2048,
        2048,
        2048,
        2048,
        1024,
        512,
        256,
        256,
    ]
    for e in events:
        assert e["unchanged"] == e["forced"] and e["masters_unchanged"] == e["forced"], e
        if e["forced"]:
            assert e["message"] == (
                "Gradient overflow.  Skipping step, loss scaler 0 reducing "
                "loss scale to %s" % float(e["scale"])
            )
    assert out["master_dtypes"] == ["torch.float32"]
    assert out["model_dtypes"] == (["torch.bfloat16"] if level == "O5" else ["torch.float32"])


def test_o1_in_bf16_casts_functions_rnns_and_registered_functions(venv_python, tmp_path):
    seen = json.loads(run(venv_python, "bf16_o1_casts.py", "O1", cwd=tmp_path))
    bf16, fp32 = "torch.bfloat16", "torch.float32"
    assert seen.pop("cached_twice") == [bf16, fp32]  # bf16 output, fp32 weight gradient
    for key in ("matmul", "conv2d", "user_bf16"):
        assert seen.pop(key) == bf16, key
    for key in ("softmax", "promote_add", "promote_cat"):
        assert seen.pop(key) == fp32, key
    assert seen.pop("user_half") == "torch.float16"  # register_half_function still means fp16
    for cell in ("RNNCell", "GRUCell", "LSTMCell"):
        assert seen.pop(cell) == bf16, cell
    for rnn in ("rnn_tanh", "rnn_relu", "gru", "lstm"):
        assert seen.pop(rnn) == [bf16, fp32, fp32], rnn  # output, input and weight gradients
    assert seen.pop("lstm_bf16_input") == [bf16, bf16, bf16]  # taken on torch 2.x too
    assert seen.pop("binary_cross_entropy").startswith(
        "refused: amp does not work out-of-the-box with `F.binary_cross_entropy`"
    )
    assert not seen, seen


def test_bf16_checkpoint_resumes_bit_exact_in_a_new_process(venv_python, tmp_path):
    straight, checkpoint = tmp_path / "straight.pt", tmp_path / "checkpoint.pt"
    run(venv_python, "bf16_checkpoint.py", "straight", straight, "O5", 1, cwd=tmp_path)
    saved = json.loads(
        run(venv_python, "bf16_checkpoint.py", "first", checkpoint, "O5", 1, cwd=tmp_path)
    )
    # The model's state_dict is fp32 (O2's hook), the bf16 model's fp32 masters travel in the
    # optimizer's state_dict, and amp's state is the loss scaler (2^16 grown 4 times).
    assert saved["params"] == ["torch.bfloat16", "torch.float32"]
    assert saved["model"] == saved["masters"] == saved["state"] == ["torch.float32"]
    assert saved["amp"] == {"loss_scaler0": {"loss_scale": 2.0**20, "unskipped": 0}}
    run(
        venv_python,
        "bf16_checkpoint.py",
        "resume",
        checkpoint,
        "O5",
        1,
        cwd=tmp_path,
        APEXNPU_EXACT_RESUME="1",
    )
    compare = (
        "import torch, sys; a = torch.load(sys.argv[1], map_location='cpu'); "
        "b = torch.load(sys.argv[2], map_location='cpu'); "
        "print(sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a))"
    )
    proc = subprocess.run(
        [venv_python, "-c", compare, str(straight), str(checkpoint) + ".resumed"],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    assert proc.stdout.strip() == "True", proc.stderr


def test_a_910_refuses_bf16_at_initialize_naming_the_chip(venv_python, tmp_path):
    environ = {k: v for k, v in os.environ.items() if k not in CHIP_VARIABLES}
    environ["APEXNPU_SOC_VERSION"] = "Ascend910A"
    proc = subprocess.run(
        [venv_python, os.path.join(SCENARIOS, "bf16_refused.py")],
        capture_output=True,
        text=True,
        env=environ,
        cwd=str(tmp_path),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert [line.split()[1] for line in lines[:-1]] == [
        "O4",
        "O5",
        "O1_patch_type",
        "O2_cast_model_type",
        "O2_cast_model_type_dynamic",
        "bad_patch_type",
        "patch_type_at_O2",
        "O4_made_fp16",
        "O5_made_fp16",
        "fp16_O2_after",
    ]
    out = json.loads(lines[-1])
    assert out["chip"] == "Ascend910A"
    assert out["message"].startswith(
        "amp.initialize: bfloat16 training needs an NPU that "
        "computes in bfloat16 (Ascend 910B or later); this NPU is "
        "Ascend910A"
    )


# --- the overlay alone (no upstream Apex, no wheel) ------------------------------------------


def test_repoint_puts_bf16_gradients_into_a_combined_buffer(monkeypatch):
    # change_data_ptr takes fp32 and fp16 only, as Ascend's; amp's combined gradients of a
    # bf16 model are re-pointed by apex.npu.combined.repoint: views of the buffer, the
    # parameter's gradient accumulator kept, the storage size it had recorded.
    import overlay_support

    monkeypatch.setenv("APEXNPU_SOC_VERSION", "Ascend910B1")
    out = overlay_support.run_with_emulator("""
        import torch, torch_npu
        from apex.npu.combined.repoint import repoint
        from apex.npu.combined import storage_sizes
        w = torch.nn.Parameter(torch.ones(2, 3, dtype=torch.bfloat16, device="npu"))
        (w.float() * 2).sum().backward()
        flat = torch.zeros(64, dtype=torch.bfloat16, device="npu")
        repoint(w.grad, flat, 16)
        flat[16:22] = 5
        (w.float() * 3).sum().backward()  # accumulates into the buffer
        accumulator = w.expand_as(w).grad_fn.next_functions[0][0]
        repoint(w, flat, 40)  # a parameter itself: its gradient accumulator is kept
        same = w.expand_as(w).grad_fn.next_functions[0][0] is accumulator
        same = same and w.data_ptr() == flat[40:].data_ptr() and w.is_leaf
        try:
            repoint(torch.zeros(4, device="npu"), flat, 0)
            refused = "no"
        except RuntimeError as e:
            refused = "yes" if "cannot go at offset 0" in str(e) else str(e)
        print(flat[16:22].tolist() == [8.0] * 6, w.grad.data_ptr() == flat[16:].data_ptr(),
              w.grad.shape == (2, 3), storage_sizes.storage_size(w.grad), same, refused)
    """)
    assert out == ["True", "True", "True", "6", "True", "yes"]
