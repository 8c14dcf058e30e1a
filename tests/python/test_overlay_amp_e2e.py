"""apex.amp on the emulated NPU, end to end on the installed wheels (real upstream Apex + our
patch and overlay, and the torch_npu emulator, built by apexnpu, installed into a venv over the
torch of the Python running the test: Debian's 1.13 or the torch 2.x venv's).

Needs APEXNPU_TEST_UPSTREAM (an NVIDIA Apex repository) and `apexnpu gen`; skips with a message
otherwise. APEXNPU_TEST_APEX_TREE may name an already generated tree instead (development).
The scenarios are scripts in overlay_support/amp_scenarios, run by the venv's interpreter.
"""

import ast
import json
import os
import subprocess
import sys

import pytest
import torch

import build_helpers as bh
from overlay_support import wheels

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "overlay_support", "amp_scenarios")
PYTHON = sys.executable  # the wheels are built for it, the venv sees its torch


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory):
    return wheels.amp_venv(tmp_path_factory, "amp-e2e")


def run(vpy, script, *args, cwd, env=None):
    env = dict(os.environ, **(env or {}))
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [vpy, os.path.join(SCENARIOS, script)] + [str(a) for a in args],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(cwd),
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


@pytest.fixture(scope="module")
def o0_result(venv_python, tmp_path_factory):
    return json.loads(
        run(venv_python, "levels.py", "O0", "none", 0, 0, cwd=tmp_path_factory.mktemp("o0"))
    )


LEVEL_CASES = [
    (level, scale, cg, fused)
    for level, scale in [
        ("O1", "dynamic"),
        ("O1", 128.0),
        ("O2", "dynamic"),
        ("O2", 128.0),
        ("O3", "none"),
        ("O3", "dynamic"),
    ]
    for cg in (0, 1)
    for fused in (0, 1)
    if not (cg and level == "O3")
]


@pytest.mark.parametrize("level, scale, combine_grad, fused", LEVEL_CASES)
def test_levels_train_like_o0_with_the_promised_dtypes(
    venv_python, o0_result, tmp_path, level, scale, combine_grad, fused
):
    result = json.loads(
        run(venv_python, "levels.py", level, scale, combine_grad, fused, cwd=tmp_path)
    )
    # Trains: the loss falls by 40% and ends within 0.02 (absolute) + 5% of O0's final loss.
    assert result["last"] < 0.6 * result["first"]
    assert result["last"] <= o0_result["last"] * 1.05 + 0.02
    dtypes = result["dtypes"]
    conv_and_linear = ["0.weight", "3.weight", "8.weight", "8.bias"]
    batchnorm = ["1.weight", "1.bias", "4.weight", "4.bias"]
    if level == "O1":
        assert set(dtypes.values()) == {"torch.float32"}
    elif level == "O2":
        assert {dtypes[n] for n in conv_and_linear} == {"torch.float16"}
        assert {dtypes[n] for n in batchnorm} == {"torch.float32"}  # keep_batchnorm_fp32
        assert result["masters"] == ["torch.float32"]  # fp32 master weights
    else:
        assert set(dtypes.values()) == {"torch.float16"}
    if scale not in ("dynamic",):
        assert result["scale"] == (1.0 if scale == "none" else scale)


def test_o1_casts_cached_weights_and_every_rnn_on_the_npu(venv_python, tmp_path):
    seen = json.loads(run(venv_python, "o1_casts.py", cwd=tmp_path))
    assert seen.pop("cached_twice") == ["torch.npu.HalfTensor", "torch.npu.FloatTensor"]
    for cell in ("RNNCell", "GRUCell", "LSTMCell"):
        assert seen.pop(cell) == "torch.npu.HalfTensor"
    # torch >= 2.1's nn.RNN refuses an input whose dtype is not its weights' outside torch's
    # autocast; O1 casts both inside the RNN, so while it casts, fp16 inputs pass on every torch
    # (NVIDIA's and Ascend's apex leave the refusal in place), and only then.
    checks_dtype = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 1)
    for outside_amp in ("casts_disabled", "deactivated"):
        message = seen.pop(outside_amp)
        if checks_dtype:  # (torch 1.x leaves the mismatch to the kernel)
            assert "does not match weight dtype" in message, (outside_amp, message)
    assert len(seen) == 16
    for key, result in seen.items():
        assert result[0] != "refused", (key, result)
        out, input_grad, weight_grad = result
        assert out == "torch.npu.HalfTensor", key  # O1 runs every RNN in fp16
        assert input_grad == key.split("-")[-1] and weight_grad == "torch.float32", key


def test_o0_trains_fp32(o0_result):
    assert set(o0_result["dtypes"].values()) == {"torch.float32"}
    assert o0_result["last"] < 0.6 * o0_result["first"]


@pytest.mark.parametrize("level", ["O1", "O2"])
@pytest.mark.parametrize("mode", ["saturation", "inf_nan"])
@pytest.mark.parametrize("combine_grad", [0, 1])
def test_overflow_skips_the_step_and_scale_follows_window_min_max(
    venv_python, tmp_path, combine_grad, mode, level
):
    # Ascend 910 saturates fp16 and raises the float status; 910B's INF/NAN mode gives inf and
    # the scaler looks at the values: both skip the same steps.
    out = json.loads(
        run(
            venv_python,
            "overflow.py",
            combine_grad,
            level,
            cwd=tmp_path,
            env={"APEXNPU_INF_NAN_MODE": "1" if mode == "inf_nan" else "0"},
        )
    )
    assert out["inf_nan"] == (mode == "inf_nan")
    events = out["events"]
    scales = [e["scale"] for e in events]
    # init 2^10; overflow -> 512; 3 clean steps -> 1024, 3 more -> 2048 (= max), stays at max;
    # then overflows halve it down to min 256 and no further.
    assert scales == [
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


@pytest.mark.parametrize("level, combine_grad", [("O1", 0), ("O1", 1), ("O2", 0), ("O2", 1)])
def test_checkpoint_resume_in_a_new_process_is_bit_exact(
    venv_python, tmp_path, level, combine_grad
):
    straight, checkpoint = tmp_path / "straight.pt", tmp_path / "checkpoint.pt"
    run(venv_python, "checkpoint.py", "straight", straight, level, combine_grad, cwd=tmp_path)
    run(venv_python, "checkpoint.py", "first", checkpoint, level, combine_grad, cwd=tmp_path)
    # The saved fp32 masters are restored only when asked (by default a resume starts from the
    # fp16 weights, as in Ascend's apex, so checkpoints resume alike in both).
    run(
        venv_python,
        "checkpoint.py",
        "resume",
        checkpoint,
        level,
        combine_grad,
        cwd=tmp_path,
        env={"APEXNPU_EXACT_RESUME": "1"},
    )
    # map_location="cpu": the emulator records npu:N storage locations, as a real NPU does.
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


def test_manual_examples_run_as_written(venv_python, tmp_path):
    results = ast.literal_eval(run(venv_python, "manual_examples.py", cwd=tmp_path))
    assert results["o2_bmm_half"] == "torch.float16"  # register_half_function(torch, 'bmm')
    assert results["guide_sigmoid_float"] == "torch.float32"  # register_float_function
    assert results["quick_start_fused_ctor"] == "NpuFusedSGD"
    for key, value in results.items():
        if isinstance(value, float):
            assert value == value and value < 10.0, (key, value)


def test_ascend_script_trains_unchanged(venv_python, tmp_path):
    first, last = map(float, run(venv_python, "ascend_script.py", cwd=tmp_path).split())
    assert last < 0.3 * first


def test_bad_input_is_a_clear_error_and_nothing_is_half_applied(venv_python, tmp_path):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [venv_python, os.path.join(SCENARIOS, "bad_input.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ok = {line.split()[1] for line in proc.stdout.splitlines() if line.startswith("ok ")}
    assert ok == {
        "int64_param",
        "bf16_param",
        "combine_grad_O0",
        "user_cast_preferred_O2",
        "combine_ddp",
        "load_not_a_dict",
        "load_negative_scale",
        "load_nan_scale",
        "load_missing_key",
        "load_unexpected_key",
        "load_bad_masters",
    }


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_combine_ddp_ranks_train_like_one_process_on_the_whole_batch(venv_python, tmp_path, level):
    import torch

    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # all ranks on this machine
    script = os.path.join(SCENARIOS, "combine_ddp.py")
    outs = [tmp_path / f"rank{r}.pt" for r in range(2)]
    ranks = [
        subprocess.Popen(
            [venv_python, script, level, str(r), "2", str(tmp_path / "init"), str(outs[r])],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=str(tmp_path),
        )
        for r in range(2)
    ]
    logs = [p.communicate(timeout=600)[0] for p in ranks]
    assert all(p.returncode == 0 for p in ranks), "\n".join(logs)[-6000:]
    reference = tmp_path / "reference.pt"
    run(venv_python, "combine_ddp.py", level, 0, 1, "-", reference, cwd=tmp_path)
    a, b, ref = (torch.load(str(f), map_location="cpu") for f in (outs[0], outs[1], reference))
    for p, q in zip(a["params"], b["params"]):
        assert torch.equal(p, q)  # one replica on every rank
    assert a["scale"] == b["scale"] == ref["scale"]
    # Half a batch per rank, averaged, against the whole batch: the same training up to fp16
    # rounding of the forward pass and of O2's fp16 weights (measured: 7.5e-5 at O1, 2.4e-4 at
    # O2; each rank on its own half without averaging: 0.56).
    tolerance = 5e-4 if level == "O1" else 2e-3
    err = max(float((p - q).abs().max()) for p, q in zip(a["params"], ref["params"]))
    assert err < tolerance, err
    assert a["losses"][-1] < 0.7 * a["losses"][0]


def test_combine_ddp_bench_runs_and_prints_the_ratio(venv_python, tmp_path):
    bench = os.path.join(HERE, "..", "..", "bench", "combine_ddp_bench.py")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [venv_python, bench, "--width", "64", "--steps", "2", "--warmup", "1", "--rounds", "1"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("2 ranks (hccl), MLP of 0.0M parameters"), proc.stdout
    assert float(lines[-1].split(":")[1].split()[0]) > 0, proc.stdout


def test_gradient_accumulation_with_and_without_delay_unscale(venv_python, tmp_path):
    errors = {}
    for level, combine_grad, delay in [
        ("O1", 0, 0),
        ("O1", 0, 1),
        ("O1", 1, 0),
        ("O1", 1, 1),
        ("O2", 0, 0),
        ("O2", 0, 1),
        ("O2", 1, 0),
        ("O2", 1, 1),
    ]:
        out = run(venv_python, "accumulate.py", level, combine_grad, delay, cwd=tmp_path)
        errors[(level, combine_grad, delay)] = float(out.split()[-1])
    # O1 keeps fp32 params: the static power-of-two scale cancels exactly up to fp32 rounding.
    assert all(v < 1e-6 for k, v in errors.items() if k[0] == "O1"), errors
    # O2 params are fp16: within fp16 rounding, and the same whichever way grads were combined.
    o2 = {v for k, v in errors.items() if k[0] == "O2"}
    assert len(o2) == 1 and o2.pop() < 1e-3, errors


# --- issue 18: behaviours Ascend's apex has ----------------------------------------------------


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_a_forward_saturation_is_no_overflow_of_the_step(venv_python, tmp_path, level):
    # Ascend's scale_loss clears the float status on entry: masked_fill(-1e9) on fp16 scores
    # saturates every forward, yet no step is skipped and the scale stays at 2^16.
    events = json.loads(run(venv_python, "forward_saturation.py", level, cwd=tmp_path))
    clean, overflow, accumulated = events[:5], events[5], events[6]
    assert all(e["saturated_in_forward"] for e in events)
    assert all(e["stepped"] and e["scale"] == 65536.0 for e in clean)
    # A backward overflow still skips and backs off, also one from a delayed-unscale backward.
    assert not overflow["stepped"] and overflow["scale"] == 32768.0
    assert not accumulated["stepped"] and accumulated["scale"] == 16384.0


def test_fused_layer_norm_falls_back_to_torch_layer_norm(venv_python, tmp_path):
    result = json.loads(run(venv_python, "layer_norm.py", cwd=tmp_path))
    for affine in (True, False):  # bit for bit: it is F.layer_norm
        assert result[f"module_affine={affine}"] == [True, "npu", True]
    assert result["functional_affine"] and result["functional"]
    first, last = result["losses"]
    assert last < 0.5 * first


def test_a_bert_recipes_own_group_step_steps_as_the_optimizer(venv_python, tmp_path):
    """Ascend's BERT recipes subclass NpuFusedBertAdam and step amp's combined buffers in their
    own ``_group_step``, advancing the combined state's ``step`` their warmup reads: the
    subclass trains as the optimizer itself (before, its step stayed 0, so its learning
    rate stayed 0 and nothing trained)."""
    out = json.loads(run(venv_python, "bert_group_step.py", cwd=tmp_path))
    subclass, stock = out["subclass"], out["stock"]
    assert out["used_lrs"] == pytest.approx(
        [0.0, 0.025, 0.05, 0.04375, 0.0375, 0.03125, 0.025, 0.01875]
    )
    # The same update; the stock step may sum in another order (the runtime's fused kernel):
    # fp32 masters within a few ulps.
    assert subclass["steps"] == stock["steps"] == [8]
    assert subclass["losses"] == pytest.approx(stock["losses"], rel=1e-6)
    for got, want in zip(subclass["masters"], stock["masters"]):
        assert got == pytest.approx(want, rel=1e-6, abs=1e-6)
    assert subclass["losses"][-1] < 0.6 * subclass["losses"][0]


HELPER_CASES = [
    (level, which, cg, zero)
    for level in ("O1", "O2")
    for which, cg in (("torch_sgd", 1), ("fused_adam", 0), ("fused_adam", 1))
    for zero in ("opt", "opt_none", "model_none")
] + [("O1", "torch_sgd", 0, "opt"), ("O2", "torch_sgd", 0, "opt")]


@pytest.mark.parametrize("level, which, combine_grad, zero", HELPER_CASES)
def test_optimizer_getters_on_every_optimizer_and_fusion_kept_across_steps(
    venv_python, tmp_path, level, which, combine_grad, zero
):
    out = json.loads(
        run(venv_python, "optimizer_getters.py", level, which, combine_grad, zero, cwd=tmp_path)
    )
    fused = which == "fused_adam"
    combined = bool(combine_grad) or fused  # NpuFused optimizers combine at O1/O2 (Ascend)
    # optimizer_getters.py passes combine_grad=True or leaves it out: Ascend's amp leaves the
    # option on the optimizer as given, None when not given.
    assert out["accelerate"] is (True if combine_grad else None)
    assert out["is_npu_fused_optimizer"] == fused
    assert out["grads_before_backward"] == 0  # nothing combined before the first backward
    # clip_optimizer_grad_norm_fused on any optimizer equals torch's clip_grad_norm_ (fp32
    # norms of the same gradients in another order: 1e-5 relative).
    got, want = out["norm"]
    assert abs(got - want) <= 1e-5 * want and out["clipped_max_error"] < 1e-6, out
    assert out["clip_model"] == ("ok" if level == "O1" else "RuntimeError")
    if not combined:
        assert out["grads"] == 0 and out["builds"] is None
        return
    # As Ascend's lists: O2 [masters of fp16 parameters, fp32 parameters] (None: none here, the
    # LayerNorm is fp16 too), O1 the one fp32 buffer; masks fp32.
    assert out["grad_slots"] == (["torch.float32", None] if level == "O2" else ["torch.float32"])
    assert out["mask_dtypes"] == ["torch.float32"]
    assert out["mask_elements"] == out["master_elements"]
    assert out["masked_sum_matches"]
    assert out["params"] == (out["grads"] if fused else 0)  # combined params: NpuFused only
    assert out["model_mask_elements"] == out["model_elements"]
    if level == "O2":  # fp16 model gradients, and the fp32 LayerNorm's beside the masters
        assert "torch.float16" in out["model_grad_dtypes"]
    # Five steps, whatever set_to_none says: the buffers were made once.
    assert out["builds"] == 1, out
    if fused:
        assert out["fusions"] == 1, out


def test_amp_state_dict_loads_in_nvidia_and_ascend_apex_and_theirs_here(venv_python, tmp_path):
    upstream = os.environ.get("APEXNPU_TEST_UPSTREAM", "")
    if not os.path.isdir(upstream):
        pytest.skip("needs APEXNPU_TEST_UPSTREAM as a local repository (NVIDIA's frontend.py)")
    pin = None
    with open(os.path.join(HERE, "..", "..", "patches", "UPSTREAM")) as f:
        for line in f:
            if line.startswith("commit "):
                pin = line.split()[1]
    frontend = tmp_path / "nvidia_frontend.py"
    shown = subprocess.run(
        ["git", "-C", upstream, "show", f"{pin}:apex/amp/frontend.py"],
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0, shown.stderr
    frontend.write_text(shown.stdout)
    out = json.loads(
        run(
            venv_python,
            "amp_state_dict.py",
            frontend,
            cwd=tmp_path,
            env={"APEXNPU_EXACT_RESUME": "1"},
        )
    )
    assert out["amp_keys"] == ["loss_scaler0"]
    assert out["opt_keys"] == ["amp_master_params", "param_groups", "state"]
    assert out["masters_saved"] is True
    assert out["theirs_loads_ours"] is True, out["theirs_loads_ours"]
    assert out["torch_loader_takes_ours"] is True
    assert out["ascend_amp_loaded"] == [512.0, 7]
    assert out["legacy_masters_loaded"] and out["opt_masters_loaded"]


# --- O2 for torch-native AMP code (apex.npu.amp_decorate) ------------------------------------


@pytest.mark.parametrize("optimizer", ["torch_sgd", "npu_fused_sgd"])
def test_amp_decorate_trains_as_amp_initialize_o2(venv_python, tmp_path, optimizer):
    import torch

    got = {}
    for mode in ("decorate", "initialize"):
        run(venv_python, "native_o2.py", mode, optimizer, tmp_path / f"{mode}.pt", cwd=tmp_path)
        got[mode] = torch.load(tmp_path / f"{mode}.pt")
    decorated, initialized = got["decorate"], got["initialize"]
    # The same loss scaler and the same update on the same values: bit for bit (the promise is
    # "within fp tolerance"; nothing here rounds differently).
    for a, b in zip(decorated["masters"], initialized["masters"]):
        assert a.dtype == torch.float32 and torch.equal(a, b)
    assert decorated["history"] == initialized["history"]
    # The forced overflows, and only they, are skipped; O2's scaler halves the scale (the
    # GradScaler's own backoff 0.25 and growth every 3 steps do not act).
    assert [stepped for _, stepped in decorated["history"]] == [
        step not in (20, 35) for step in range(50)
    ]
    assert [scale for scale, _ in decorated["history"]] == [2.0**16] * 20 + [2.0**15] * 15 + [
        2.0**14
    ] * 15
    assert decorated["dtypes"] == {
        "0.weight": "torch.float16",
        "0.bias": "torch.float16",
        "1.weight": "torch.float32",
        "1.bias": "torch.float32",
        "3.weight": "torch.float16",
        "3.bias": "torch.float16",
    }


def test_amp_decorate_after_ddp_says_to_call_it_first(venv_python, tmp_path):
    message = run(venv_python, "decorate_after_ddp.py", cwd=tmp_path)
    assert message.startswith(
        "amp_decorate: the model is already wrapped in "
        "DistributedDataParallel; call amp_decorate on the bare model "
        "first"
    ), message


# --- combine_ddp under the communication switches ------------------------------------------
# As tests/python/test_overlay_comm_switches.py does for torch DDP, with the same tolerances:
# apex.amp's combine_ddp (NpuFusedSGD) at O1 (fp32 master buffers all-reduced) and O2 (the
# fp16 model-gradient buffer), against the same run without switches. At O2 the sums are of
# fp16 values, so the hierarchy's other order is held to fp16's rounding (atol 1e-3).

COMBINE_CASES = [
    ("combine_ddp_O1", 2, 1, "fp16"),
    ("combine_ddp_O2", 2, 1, "powersgd"),
    ("combine_ddp_O1", 4, 2, "hierarchical"),
    ("combine_ddp_O2", 4, 2, "hierarchical"),
    ("combine_ddp_O2", 4, 2, "powersgd"),
]


@pytest.mark.parametrize("parallel,world,per_node,switch", COMBINE_CASES)
def test_combine_ddp_under_the_communication_switches(
    venv_python, tmp_path, parallel, world, per_node, switch
):
    from overlay_support import comm_runs

    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    flat = comm_runs.run(tmp_path, parallel, world, per_node, env, python=venv_python)
    if switch == "fp16":
        got = comm_runs.run(
            tmp_path,
            parallel,
            world,
            per_node,
            env,
            python=venv_python,
            APEXNPU_FP16_COMPRESSION="1",
        )
        comm_runs.assert_close(got, flat, rtol=1e-3, atol=1e-4)
        assert comm_runs.max_difference(got, flat) > 0
    elif switch == "powersgd":
        got = comm_runs.run(
            tmp_path,
            parallel,
            world,
            per_node,
            env,
            python=venv_python,
            APEXNPU_POWERSGD_COMPRESSION="1",
            APEXNPU_START_COMPRESS_ITER="3",
        )
        assert comm_runs.max_difference(got, flat, range(3)) == 0
        assert all(comm_runs.max_difference(got, flat, [s]) > 0 for s in range(3, comm_runs.STEPS))
        comm_runs.assert_close(got, flat, rtol=0, atol=5e-2)
    else:
        got = comm_runs.run(
            tmp_path,
            parallel,
            world,
            per_node,
            env,
            python=venv_python,
            APEXNPU_HIERARCHICAL_ALLREDUCE="1",
        )
        tol = dict(rtol=1e-3, atol=1e-3) if parallel.endswith("O2") else dict(rtol=1e-5, atol=1e-6)
        comm_runs.assert_close(got, flat, **tol)
        leaders = [r["internode_bytes"] > 0 for r in got]
        assert leaders == [r % per_node == 0 for r in range(world)]
    comm_runs.assert_ranks_identical(got)


# --- AIAK-Training's names (seed 004) ---------------------------------------------------------


def test_seed_004_example_trains_as_written_with_aiak_variables(venv_python, tmp_path):
    env = {
        "AIAK_FUSED_OPTIMIZER": "1",
        "AIAK_FP16_COMPRESSION": "1",
        "AIAK_HIERARCHICAL_ALLREDUCE": "0",
        "AIAK_POWERSGD_COMPRESSION": "0",
        "AIAK_MATRIX_APPROXIMATION_RANK": "1",
        "AIAK_START_COMPRESS_ITER": "1000",
    }
    out = json.loads(run(venv_python, "aiak_seed004.py", cwd=tmp_path, env=env))
    first, last = out["losses"]  # random labels: the loss falls to about half (0.51 measured)
    assert last < 0.6 * first, out
    assert out["param_dtype"] == "torch.float16"  # O2: aiak_amp_decorate is amp_decorate
    assert out["optimizer"] == "NpuFusedSGD"  # AIAK_FUSED_OPTIMIZER=1 acted
    assert out["lamb"] == "apex.optimizers.lamb.LAMB"
    # 30 steps at lr 1e-2, gradients clipped to norm 1, move slowly: the loss on one batch,
    # before and after them, falls by about 6% (0.942 measured; without a step it stays put).
    before, after = out["lamb_probe"]
    assert before == out["lamb_losses"][0] and after < 0.97 * before, out


def test_our_variables_win_over_aiak_ones_and_say_so(venv_python, tmp_path):
    code = (
        "import apex, apex.npu.ddp.comm_settings as c; s = c.from_environment(); "
        "print(s.fp16, s.rank, c.from_environment().rank)"
    )
    env = dict(
        bh.venv_env(),
        AIAK_FP16_COMPRESSION="1",
        AIAK_MATRIX_APPROXIMATION_RANK="4",
        APEXNPU_MATRIX_APPROXIMATION_RANK="2",
    )
    proc = subprocess.run(
        [venv_python, "-c", code], capture_output=True, text=True, env=env, cwd=str(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "2", "2"]
    said = [
        line for line in proc.stderr.splitlines() if "APEXNPU_MATRIX_APPROXIMATION_RANK" in line
    ]
    assert len(said) == 1 and "AIAK_MATRIX_APPROXIMATION_RANK='4'" in said[0], proc.stderr
