"""The torch_npu emulator package (src/torch_npu) with the overlay's apex over it: apex finds the
emulator in either import order, torch_npu's helpers (storage sizes, formats) behave as on the
NPU, and its transfer_to_npu runs CUDA scripts on the emulated NPU. Each case runs in a fresh
interpreter, as import order and migration are process-wide."""

import overlay_support


def run(code):
    return overlay_support.run_with_emulator(code)


def test_import_torch_npu_gives_the_emulator():
    out = run("""
        import torch, torch_npu
        import apex.npu
        import torch_npu.npu
        print(apex.npu.is_real_npu(), torch_npu.npu is torch.npu, torch_npu.__apexnpu_emulator__,
              torch.npu.device_count(), torch.zeros(1, device="npu:3").device)
    """)
    assert out == ["False", "True", "True", "8", "npu:3"]


def test_apex_first_finds_the_emulator_too():
    out = run("""
        import apex.npu, sys, torch
        print(apex.npu.is_real_npu(), "torch_npu" in sys.modules, torch.npu.is_available())
    """)
    assert out == ["False", "True", "True"]


def test_storage_sizes_and_formats():
    out = run("""
        import torch, torch_npu
        from apex.contrib.combine_tensors import combine_npu, get_aligned_storage_size
        x, y = torch.zeros(5, device="npu"), torch.zeros(20, device="npu")
        combined = combine_npu([x, y])
        # apex's combine makes x and y views of the combined buffer: torch_npu reports the
        # buffer's storage for them, as it does for any view; apex keeps each one's own slot.
        print(torch_npu.get_storage_size(combined), torch_npu.get_storage_size(x),
              get_aligned_storage_size(x), get_aligned_storage_size(y),
              y.data_ptr() - x.data_ptr() == get_aligned_storage_size(x) * x.element_size(),
              combined.is_npu)
        # npu_format_cast returns a new tensor (the input itself when already in that format);
        # npu_format_cast_ changes the tensor in place. Private formats store padded elements.
        w = torch.ones(3, 20, device="npu")
        nz = torch_npu.npu_format_cast(w, 29)
        print(nz is w, int(torch_npu.get_npu_format(nz)), int(torch_npu.get_npu_format(w)),
              torch_npu.get_storage_size(nz), torch.equal(nz.cpu(), w.cpu()),
              torch_npu.npu_format_cast(nz, 29) is nz, w.npu_format_cast_(29) is w,
              int(torch_npu.get_npu_format(w)), torch_npu.get_storage_size(w))
    """)
    assert out == [
        "112",
        "112",
        "48",
        "64",
        "True",
        "True",
        "False",
        "29",
        "2",
        "512",
        "True",
        "True",
        "True",
        "29",
        "512",
    ]


def test_torch_npu_amp_and_its_cuda_name():
    out = run("""
        import torch, torch.nn as nn
        import torch_npu
        from torch_npu.npu.amp import autocast as npu_autocast
        from torch_npu.contrib import transfer_to_npu
        from torch.cuda.amp import autocast, GradScaler
        model = nn.Linear(4, 2).cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = GradScaler()
        with autocast():
            out = model(torch.ones(3, 4).cuda())
        with torch.autocast("cuda"):
            again = model(torch.ones(3, 4).cuda())
        scaler.scale(out.float().sum()).backward()
        scaler.step(opt)
        scaler.update()
        print(autocast is npu_autocast, out.dtype, again.dtype, scaler.get_scale(),
              torch.cuda.amp is torch.npu.amp)
    """)
    # The fp16 weight gradient is 3 * 65536 > 65504: it saturates, so the step is skipped and
    # the scale backs off, as an fp16 overflow does on a GPU.
    assert out == ["True", "torch.float16", "torch.float16", "32768.0", "True"]


def test_transfer_to_npu_runs_a_cuda_script():
    out = run("""
        import io
        import torch, torch.nn as nn
        import torch_npu
        from torch_npu.contrib import transfer_to_npu
        assert torch.cuda.is_available() and torch.cuda.device_count() == 8
        torch.cuda.set_device(1)
        torch.manual_seed(0)
        torch.cuda.manual_seed_all(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        data = torch.randn(32, 4).cuda(non_blocking=True)
        target = torch.zeros(32, 1, device="cuda")
        dev = torch.device("cuda", 1)
        for _ in range(3):
            opt.zero_grad()
            nn.functional.mse_loss(model(data.to(dev)), target).backward()
            opt.step()
        torch.cuda.synchronize()
        buf = io.BytesIO()
        torch.save({"model": model.state_dict()}, buf)
        buf.seek(0)
        state = torch.load(buf, map_location="cuda:0")
        torch.set_default_tensor_type(torch.cuda.FloatTensor)
        made = torch.zeros(1)
        torch.set_default_tensor_type(torch.FloatTensor)
        with torch.cuda.nvtx.range("step"):
            pass
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(); end.record()
        # transformers' Reformer seeds each layer from the current device's generator.
        seed = torch.cuda.default_generators[torch.cuda.current_device()].seed()
        print(model[0].weight.device, data.device, target.device, state["model"]["0.weight"].device,
              made.device, torch.cuda.current_device(), start.elapsed_time(end) >= 0,
              data.type(), torch.cuda.FloatTensor is torch.npu.FloatTensor,
              len(torch.cuda.default_generators), seed == torch.cuda.initial_seed())
    """)
    assert out == [
        "npu:1",
        "npu:1",
        "npu:1",
        "npu:0",
        "npu:1",
        "1",
        "True",
        "torch.npu.FloatTensor",
        "True",
        "8",
        "True",
    ]
