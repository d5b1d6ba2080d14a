"""Device-to-host result copies (apsp.gpu.transfer): exact on every path, whatever was in the destination.

Without a GPU the staging pipeline runs with a CPU stand-in for the device copies (same band
arithmetic, same buffer reuse, same draining threads); `to_host` itself runs its direct path.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch not installed (pip install 'apsp[gpu]', or the CPU build)")

from apsp.gpu import transfer  # noqa: E402

DTYPES = (np.int16, np.int32, np.float32, np.float64)


class SlowCpuStager:
    """Device copies that finish later than they start, so a buffer reused too early shows."""

    def __init__(self):
        self.started = []

    def start(self, rows, slot, staged):
        self.started.append(slot)
        staged[...] = -7  # a wrong value lands first...
        return (rows, staged)

    @staticmethod
    def wait(token):
        rows, staged = token
        time.sleep(0.001)
        staged[...] = rows.numpy()  # ...the right one when the copy "completes"


def _poisoned(shape, dt):
    out = np.empty(shape, dtype=dt)
    out.view(np.uint8)[...] = 0xA5
    return out


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (7, 5), (97, 13), (1000, 3), (61, 61)])
@pytest.mark.parametrize("stage_bytes,stages", [(64, 2), (1000, 3), (4096, 8)])
def test_staged_copy_exact_for_odd_shapes_and_buffer_reuse(dt, shape, stage_bytes, stages):
    rng = np.random.default_rng(hash((np.dtype(dt).name, shape, stage_bytes)) % 2**32)
    src_np = (rng.integers(-1000, 1000, size=shape) if np.dtype(dt).kind == "i"
              else rng.standard_normal(shape) * 1e3).astype(dt)
    src = torch.from_numpy(src_np.copy())
    out = _poisoned(shape, dt)
    buffers = [np.empty(max(stage_bytes, out.itemsize * shape[1]), dtype=np.uint8) for _ in range(stages)]
    stager = SlowCpuStager()
    with ThreadPoolExecutor(4) as pool:
        transfer.staged_copy(src, out, stager, buffers, pool)
    np.testing.assert_array_equal(out, src_np)
    bands = transfer.band_rows(shape[0], out.itemsize * shape[1], min(b.nbytes for b in buffers))
    assert len(stager.started) == len(bands)


def test_band_rows_cover_every_row_once():
    for rows in (1, 2, 5, 64, 1001):
        for row_bytes in (1, 3, 100, 10**6):
            bands = transfer.band_rows(rows, row_bytes, 4096)
            assert bands[0][0] == 0 and bands[-1][1] == rows
            assert all(b0[1] == b1[0] for b0, b1 in zip(bands, bands[1:]))
            assert all(0 < b - a and ((b - a) * row_bytes <= 4096 or b - a == 1) for a, b in bands)


def test_staged_copy_waits_for_every_band_on_error():
    class Failing(SlowCpuStager):
        def start(self, rows, slot, staged):
            if len(self.started) == 3:
                raise RuntimeError("device copy failed")
            return super().start(rows, slot, staged)

    src = torch.arange(40 * 4, dtype=torch.int32).reshape(40, 4)
    out = _poisoned((40, 4), np.int32)
    buffers = [np.empty(32, dtype=np.uint8) for _ in range(2)]
    with ThreadPoolExecutor(2) as pool, pytest.raises(RuntimeError, match="device copy failed"):
        transfer.staged_copy(src, out, Failing(), buffers, pool)
    np.testing.assert_array_equal(out[:6], src.numpy()[:6])  # the bands started were finished


@pytest.mark.parametrize("dt", [torch.int16, torch.int32, torch.float32, torch.float64])
def test_to_host_direct_path_any_strides_and_out(dt):
    base = torch.arange(13 * 17, dtype=torch.float64).reshape(13, 17).to(dt)
    view = base[1:12, 2:15]  # a padded result's visible part: not contiguous
    got = transfer.to_host(view)
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, view.numpy())
    out = _poisoned((11, 13), got.dtype)
    assert transfer.to_host(view, out=out) is out
    np.testing.assert_array_equal(out, view.numpy())
    with pytest.raises(ValueError, match="C-contiguous"):
        transfer.to_host(view, out=np.empty((13, 11), dtype=got.dtype))


def test_host_result_hands_out_rows_no_toucher_writes_any_more(monkeypatch):
    """A band under way finishes before `rows` returns, the bands not started are left alone, the
    touchers go on past the rows asked for; what the copy writes stays."""
    monkeypatch.setattr(transfer, "TOUCH_BYTES", transfer.PAGE_BYTES)
    fast_touch = transfer._touch

    def touch(band):
        time.sleep(0.002)
        fast_touch(band)

    monkeypatch.setattr(transfer, "_touch", touch)
    result = transfer.HostResult((300, 1000), np.int32)  # 293 bands of one page
    time.sleep(0.01)
    first = result.rows(0, 100)
    assert 0 < result.prefaulted < 1
    first[...] = 7
    deadline = time.monotonic() + 10
    while not result._jobs[-1].done() and time.monotonic() < deadline:
        time.sleep(0.005)  # a toucher still running in the first rows would write 0 into a page now
    assert (first == 7).all()
    assert result._jobs[-1].done() and not result._jobs[-1].cancelled()  # the rest went on
    rest = result.rows(100, 300)
    rest[...] = 8
    out = result.array
    assert out.shape == (300, 1000) and out.dtype == np.int32 and out.flags.c_contiguous
    time.sleep(0.02)
    assert (out[:100] == 7).all() and (out[100:] == 8).all()


def test_host_result_faults_in_every_page_given_time_and_close_stops_it(monkeypatch):
    monkeypatch.setattr(transfer, "TOUCH_BYTES", 3 * transfer.PAGE_BYTES)
    result = transfer.HostResult((77, 1001), np.int16)
    deadline = time.monotonic() + 10
    while not all(job.done() for job in result._jobs) and time.monotonic() < deadline:
        time.sleep(0.005)
    out = result.rows(0, 77)
    assert result.prefaulted == 1.0
    flat = out.reshape(-1).view(np.uint8)
    assert (flat[::transfer.PAGE_BYTES] == 0).all() and flat[-1] == 0  # each page written once
    result.close()
    assert result._jobs == [] and result.array is None
    stopped = transfer.HostResult((300, 1000), np.int32)
    stopped.close()  # at once: the bands not started are cancelled
    assert stopped.array is None


def test_pinned_pieces_move_column_ranges_block_by_block(monkeypatch):
    """`PinnedPieces` (streamed nd-fw's host copies) with buffers of a few rows: host rows over
    column ranges side by side to the device and back, every block through alternating buffers
    (the CUDA stream and pinning stood in for on the CPU)."""
    torch = pytest.importorskip("torch")
    from apsp.gpu import transfer

    class Event:
        def synchronize(self):
            pass

    class Stream:
        def record_event(self):
            return Event()

    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: Stream())
    pieces = object.__new__(transfer.PinnedPieces)
    pieces.device, pieces.done = "cpu", [None, None]
    pieces.buffers = [torch.empty(3 * 11 * 4 + 5, dtype=torch.uint8) for _ in range(2)]  # 3 rows of 11 int32
    host = torch.arange(20 * 30, dtype=torch.int32).reshape(20, 30)
    ranges = [(2, 5), (10, 16), (28, 30)]
    assert pieces.fits(11, torch.int32) and not pieces.fits(100, torch.int32)
    out = torch.empty((13, 11), dtype=torch.int32)
    pieces.to_device(host, 4, 17, ranges, out)
    want = torch.cat([host[4:17, a:b] for a, b in ranges], 1)
    assert torch.equal(out, want)
    back = torch.zeros_like(host)
    pieces.to_host(-out, back, 4, ranges)
    expected = torch.zeros_like(host)
    for a, b in ranges:
        expected[4:17, a:b] = -host[4:17, a:b]
    assert torch.equal(back, expected)
