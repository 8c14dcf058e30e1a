"""A copy between host and NPU that does not block takes the host link's time, as on the NPU:
until then its stream's ``query()`` is False, events recorded after it are not done, and
``synchronize()`` waits (Huawei's torch_npu 1.x tests check the stream is busy after one).
The timing checks compare against the recorded end, never against a wall-clock budget."""

import overlay_support


def run(code):
    return overlay_support.run_with_emulator(code)


def test_a_non_blocking_copy_is_in_flight_for_its_bytes_on_the_link():
    out = run("""
        import time, torch, torch_npu
        from torch_npu._device import streams as st
        stream = torch.npu.current_stream()
        a = torch.randn(1 << 20, pin_memory=True)
        before = time.perf_counter()
        b = a.to("npu", non_blocking=True)
        end = st.done_at(0, stream.stream_id)
        # launch + 4 MiB at the link's 25 GB/s, started once the host had made the copy
        print(end - before >= st.COPY_LAUNCH_SECONDS + 4 * 2**20 / st.LINK_BYTES_PER_SECOND)
        c = b.to("cpu", non_blocking=True)
        print(c.is_pinned(), st.done_at(0, 0) > end)
        blocking_end = st.done_at(0, 0)
        d = b.to("cpu")  # blocks: nothing queued
        print(st.done_at(0, 0) == blocking_end, d.is_pinned())
    """)
    assert out == ["True", "True", "True", "True", "False"]


def test_streams_and_events_wait_for_copies_in_flight():
    out = run("""
        import time, torch, torch_npu
        from torch_npu._device import streams as st
        side = torch.npu.Stream()
        st.copy_in_flight(0, side.stream_id, int(st.LINK_BYTES_PER_SECOND * 0.2))  # 0.2 s
        event = side.record_event()
        print(side.query(), event.query(), torch.npu.current_stream().query())
        side.synchronize()
        print(side.query(), event.query())
        st.copy_in_flight(0, side.stream_id, int(st.LINK_BYTES_PER_SECOND * 0.2))
        torch.npu.synchronize()
        print(side.query())
    """)
    assert out == ["False", "False", "True", "True", "True", "True"]
