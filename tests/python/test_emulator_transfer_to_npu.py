"""``torch_npu.contrib.transfer_to_npu`` on the emulated NPU: its helpers behave as torch_npu's
(scripts and migration tools call them), ``torch.cuda`` and "cuda" devices are the NPU where
torch parses devices itself, autocast for "cuda" is the NPU's, and "nccl" is hccl. The migration
is process-wide, so each case runs in a fresh interpreter."""

import torch

import overlay_support

TORCH2 = hasattr(torch, "get_autocast_dtype")  # torch's autocast state per device type


def run(code):
    return overlay_support.run_with_emulator(code)


def test_the_helpers_map_cuda_to_the_npu_and_nccl_to_hccl():
    out = run("""
        import logging
        import torch, torch_npu
        from torch_npu.contrib import transfer_to_npu as t

        print(t._replace_cuda_to_npu_in_dict({"cuda:0": "cuda:1", 3: "cuda_core", "n": 1})
              == {"npu:0": "npu:1", 3: "npu_core", "n": 1})
        hccl = t._wrapper_hccl(lambda *a, **k: (a, k))
        print(hccl("nccl", "tcp://127.0.0.1:1", backend="cuda:nccl")
              == (("hccl", "tcp://127.0.0.1:1"), {"backend": "npu:hccl"}))
        print(hccl(backend="cpu:gloo,cuda:nccl")[1]["backend"])

        cuda = t._wrapper_cuda(lambda *a, **k: (a, k))
        args, kwargs = cuda("cuda:1", torch.device("cuda", 2), 3, "cudagraph",
                            device=torch.device("cuda"), map_location={"cuda:0": "cpu"},
                            device_id=1, device_ids=("cuda:0", torch.device("cuda:1")))
        print(args == ("npu:1", torch.device("npu:2"), 3, "cudagraph"))
        print(kwargs == {"device": torch.device("npu"), "map_location": {"npu:0": "cpu"},
                         "device_id": "npu:1",
                         "device_ids": ("npu:0", torch.device("npu:1"))})
        print(cuda(device_ids=["cuda:0", 1])[1] == {"device_ids": ["npu:0", 1]})

        def to(*a, **k):
            return a
        print(t._wrapper_cuda(to)(2, True) == ("npu:2", True))  # an int names an NPU in to()

        said = []
        class Said(logging.Handler):
            def emit(self, record):
                said.append(record.getMessage())
        logging.getLogger().addHandler(Said())
        profile = t._wrapper_profiler(lambda **k: k)
        print("experimental_config" not in profile(experimental_config="cuda's"), len(said))
        config = torch_npu.profiler._ExperimentalConfig()
        print(profile(experimental_config=config)["experimental_config"] is config, len(said))
    """)
    assert out == [
        "True",
        "True",
        "cpu:gloo,npu:hccl",
        "True",
        "True",
        "True",
        "True",
        "True",
        "1",
        "True",
        "1",
    ]


def test_config_files_and_library_functions_that_must_see_torchs_cuda():
    out = run("""
        import json, os, sys, tempfile, types
        import torch, torch_npu
        from torch_npu.contrib import transfer_to_npu as t

        d = tempfile.mkdtemp()
        def write(name, text):
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write(text)
            return path
        good = write("apis.json", json.dumps({"a": 1}))
        os.symlink(good, os.path.join(d, "link.json"))
        big = write("big.json", "{}")
        os.truncate(big, 10 * 1024 ** 2 + 1)
        long_name = write("n" * 201, "{}")
        print(t._check_input_file_valid(good), t._check_input_file_valid(d + "/link.json"),
              t._check_input_file_valid(d + "/missing.json"), t._check_input_file_valid(big),
              t._check_input_file_valid(long_name))
        print(t._load_json_file(good) == {"a": 1},
              t._load_json_file(write("list.json", "[1]")) == {},
              t._load_json_file(write("bad.json", "{nope")) == {},
              t._load_json_file(d + "/link.json") == {})

        sees = t._wrapper_libraries_func(lambda: torch.cuda.is_available())
        print(torch.cuda.is_available(), sees(), torch.cuda.is_available())
        probe = types.ModuleType("amp_probe")
        probe.check = lambda: torch.cuda.is_available()
        probe.later = lambda: torch.cuda.is_available()
        class Probe:
            def check(self):
                return torch.cuda.is_available()
        probe.Probe = Probe
        sys.modules["amp_probe"] = probe
        t._do_wrapper_libraries_func({
            "pytest": {"version": "1.0", "apis": {"amp_probe.check": "function",
                                                  "amp_probe.Probe.check": "method",
                                                  "amp_probe.absent": "function"}},
            "no-such-package-here": {"version": "1.0", "apis": {"amp_probe.later": "function"}}})
        t._do_wrapper_libraries_func(
            {"pytest": {"version": "999.0", "apis": {"amp_probe.later": "function"}}})
        print(probe.check(), Probe().check(), probe.later())
        t._del_nccl_device_backend_map()
        backends = getattr(torch.distributed.Backend, "default_device_backend_map", {})
        print("cuda" not in backends, backends.get("npu", "hccl"))
    """)
    assert out == [
        "True",
        "False",
        "False",
        "False",
        "False",
        "True",
        "True",
        "True",
        "True",
        "True",
        "False",
        "True",
        "False",
        "False",
        "True",
        "True",
        "hccl",
    ]


def test_torch_cuda_and_cuda_autocast_are_the_npus():
    out = run("""
        import sys
        import torch, torch_npu
        import torch.distributed as dist
        from torch_npu.contrib import transfer_to_npu
        torch2 = hasattr(torch, "get_autocast_dtype")

        amp = torch.npu.amp
        print(torch.cuda.amp is amp, sys.modules["torch.cuda.amp.grad_scaler"] is amp.grad_scaler,
              torch.cuda.amp.autocast_mode is amp.autocast_mode,
              torch.cuda.amp.common.amp_definitely_not_available())
        print(torch.cuda.get_device_name is torch.npu.get_device_name,
              torch.cuda.get_amp_supported_dtype is torch.npu.get_amp_supported_dtype,
              torch.cuda.DoubleTensor is torch.npu.FloatTensor,
              torch.cuda.default_generators == torch.npu.default_generators)
        print(torch.ones(1).cuda().is_cuda, torch.ones(1).is_cuda)
        a = torch.randn(3, 3, device="cuda")
        with torch.autocast("cuda"):
            print((a @ a).dtype, torch.is_autocast_enabled())
        print((a @ a).dtype, torch.is_autocast_enabled())
        if torch2:
            with torch.amp.autocast(device_type="cuda"):
                print((a @ a).dtype, torch.get_autocast_dtype("cuda"),
                      torch.is_autocast_enabled("cuda"), torch.is_autocast_enabled("npu"))

            class Twice(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x * 2, torch.is_autocast_enabled()

            with torch.autocast("cuda"):
                print(Twice.apply(a.half())[0].dtype, Twice.apply(a)[1])
            print(torch.get_device_module("cuda:0") is torch.npu,
                  torch.get_device_module(torch.device("cuda", 0)) is torch.npu)
            event = torch.Event(device="cuda:0", enable_timing=True)
            print(event.device.type, isinstance(event, torch.Event),
                  isinstance(torch.Event("cuda:0"), torch.Event))
        print(isinstance(torch.Generator(), torch.Generator),
              issubclass(torch._C.Generator, torch.Generator))
        print(torch.autograd.profiler_util.Kernel("kernel", "cuda", 1).device)
        with torch.profiler.profile(experimental_config=object()):
            a + 1

        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29517", world_size=1,
                                rank=0)
        flag = torch.ones(1, device="cuda")
        dist.all_reduce(flag)
        print(dist.get_backend(), dist.is_nccl_available(), flag.device)
        dist.destroy_process_group()
    """)
    torch2_only = [
        "torch.float16",
        "torch.float16",
        "True",
        "True",  # torch.amp.autocast
        "torch.float32",
        "False",  # custom_fwd(device_type="cuda")
        "True",
        "True",  # get_device_module
        "npu",
        "True",
        "True",
    ]  # torch.Event
    assert out == [
        "True",
        "True",
        "True",
        "False",
        "True",
        "True",
        "True",
        "True",
        "True",
        "False",
        "torch.float16",
        "True",
        "torch.float32",
        "False",
    ] + (torch2_only if TORCH2 else []) + ["True", "True", "npu", "hccl", "True", "npu:0"]


def test_torch_transfer_to_npu_applies_it_on_import():
    """TORCH_TRANSFER_TO_NPU=1 migrates as ``import torch_npu`` runs, as torch_npu 2.x does;
    "0" leaves "cuda" to torch; another value is refused."""
    out = run("""
        import os, subprocess, sys
        code = ("import torch, torch_npu; "
                "print(torch.randn(2, device='cuda').device.type, torch.cuda.current_device())")
        for value in ("1", "0", "yes"):
            env = dict(os.environ, TORCH_TRANSFER_TO_NPU=value)
            proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                  text=True)
            words = (proc.stdout + proc.stderr).split()
            print(value, proc.returncode == 0, words[:2] if proc.returncode == 0 else
                  "Invalid value for TORCH_TRANSFER_TO_NPU: yes" in proc.stderr)
    """)
    assert out[:5] == ["1", "True", "['npu',", "'0']", "0"], out
    assert out[5:] == ["False", "False", "yes", "False", "True"], out  # "0": no CUDA here
