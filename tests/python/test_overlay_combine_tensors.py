"""apex.contrib.combine_tensors at its edges, against Ascend's apex (github.com/Ascend/apex,
master, src/apex/contrib/combine_tensors/combine_tensors.py), whose behaviour is:

- ``get_part_combined_tensor(combined, index, size)`` returns None when ``combined`` is None or
  ``size`` is 0, raises RuntimeError when ``index + size`` passes the combined tensor's storage
  size, and otherwise gives ``size`` elements sharing the combined buffer's memory;
- ``is_combined_tensor_valid(combined, tensors)`` is True for an empty list, False for a None
  buffer or a None tensor, and otherwise asks only whether each tensor's data pointer lies in the
  combined buffer's storage (so any subset of what was combined is valid);
- ``combine_npu`` gives each tensor ``ceil(s / 16) * 16 + 32`` elements, where ``s`` is
  ``torch_npu.get_storage_size(tensor)``: a tensor in a private format (FRACTAL_NZ, NC1HWC0)
  stores more than its ``numel`` on the NPU.

Each case runs in a fresh interpreter with the emulator's torch_npu (format casts are
process-wide state of the tensors)."""

import overlay_support


def run(code):
    return overlay_support.run_with_emulator(code)


def test_a_part_of_no_buffer_or_of_no_elements_is_none_and_a_part_shares_memory():
    out = run("""
        import torch, torch_npu
        from apex.contrib.combine_tensors import combine_npu, get_part_combined_tensor
        a, b = torch.ones(5, device="npu"), torch.full((3,), 2.0, device="npu")
        combined = combine_npu([a, b])
        part = get_part_combined_tensor(combined, 48, 3)
        part.mul_(10)
        try:
            get_part_combined_tensor(combined, 90, 10)
            raised = "none"
        except RuntimeError as e:
            raised = "RuntimeError" if "100" in str(e) else str(e)
        print(get_part_combined_tensor(None, 0, 4) is None,
              get_part_combined_tensor(combined, 10, 0) is None,
              combined.numel(), b.tolist() == [20.0, 20.0, 20.0], part.is_npu, raised)
    """)
    # Slots of ceil(5/16)*16+32 = 48 and ceil(3/16)*16+32 = 48 elements.
    assert out == ["True", "True", "96", "True", "True", "RuntimeError"]


def test_validity_is_membership_in_the_buffer_so_a_subset_is_valid():
    out = run("""
        import torch, torch_npu
        from apex.contrib.combine_tensors import combine_npu, is_combined_tensor_valid
        ts = [torch.randn(n, device="npu") for n in (4, 17, 33)]
        combined = combine_npu(ts)
        outsider = torch.randn(4, device="npu")
        print(is_combined_tensor_valid(combined, ts),
              is_combined_tensor_valid(combined, ts[1:]),      # a subset: valid
              is_combined_tensor_valid(combined, [ts[2], ts[0]]),  # any order: valid
              is_combined_tensor_valid(combined, []),
              is_combined_tensor_valid(None, []),
              is_combined_tensor_valid(None, ts),
              is_combined_tensor_valid(combined, ts + [None]),
              is_combined_tensor_valid(combined, ts + [outsider]))
    """)
    assert out == ["True", "True", "True", "True", "True", "False", "False", "False"]


def test_slots_follow_the_storage_size_of_private_formats():
    out = run("""
        import torch, torch_npu
        from apex.contrib.combine_tensors import combine_npu, get_aligned_storage_size
        w = torch.randn(20, 30, device="npu")
        nz = torch_npu.npu_format_cast(torch.randn(20, 30, device="npu"), 29)   # FRACTAL_NZ
        conv = torch_npu.npu_format_cast(torch.randn(2, 3, 4, 4, device="npu"), 3)  # NC1HWC0
        values = [t.clone() for t in (w, nz, conv)]
        sizes = [torch_npu.get_storage_size(t) for t in (w, nz, conv)]
        slots = [get_aligned_storage_size(t) for t in (w, nz, conv)]
        combined = combine_npu([w, nz, conv])
        starts = [(t.data_ptr() - combined.data_ptr()) // 4 for t in (w, nz, conv)]
        kept = all(torch.equal(a, b) for a, b in zip(values, (w, nz, conv)))
        # Now views of the combined buffer (ND, as torch_npu reports them), each keeps its slot
        # in apex's reckoning.
        print(*sizes, *slots, combined.numel(), *starts, kept,
              [get_aligned_storage_size(t) for t in (w, nz, conv)] == slots,
              [torch_npu.get_npu_format(t) for t in (w, nz, conv)] == [2, 2, 2])
    """)
    # ND: 600 elements; NZ pads 20x30 to 32x32 = 1024; NC1HWC0 pads 3 channels to 16: 2*16*4*4.
    # Slots: ceil(s/16)*16 + 32, placed one after the other.
    assert out == [
        "600",
        "1024",
        "512",
        "640",
        "1056",
        "544",
        "2240",
        "0",
        "640",
        "1696",
        "True",
        "True",
        "True",
    ]
