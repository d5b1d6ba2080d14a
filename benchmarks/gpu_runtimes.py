"""GPU runtimes compared (run on a CUDA machine from the repository root: python benchmarks/gpu_runtimes.py).

The CUDA driver runtime vs the torch runtime: the same look-ahead rounds on the same matrix, results equal, timed
on device events (median of 3 after a warm-up), against the min-plus ceiling measured in the same run."""
import statistics, sys, time
import numpy as np
sys.path.insert(0, ".")
from apsp.gpu import cuda
from apsp.gpu.devarray import DeviceArray
from apsp.gpu import rounds
from apsp.gpu.footprint import gpu_padded
import torch
from apsp.gpu import ceiling, minplus

cuda.start()
for dname, n in [("int32", 16384), ("int16", 16384), ("int32", 32768), ("int16", 32768)]:
    dt = np.dtype(dname)
    rng = np.random.default_rng(n)
    n_pad = gpu_padded(n, interpreted=False)
    from apsp import exactness; inf = int(exactness.inf_value(dt))
    host = np.full((n_pad, n_pad), inf, dt)
    w = rng.integers(0, 4, (n, n), dtype=dt)
    keep = rng.random((n, n), dtype=np.float32) < 0.5
    sub = host[:n, :n]; sub[keep] = w[keep]; np.fill_diagonal(sub, np.minimum(np.diagonal(sub), 0))
    del w, keep
    # torch
    start_t = torch.from_numpy(host).cuda()
    assert int(minplus.inf_for(start_t)) == inf, (minplus.inf_for(start_t), inf)
    d_t = start_t.clone()
    times_t = []
    for rep in range(4):
        d_t.copy_(start_t); torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); rounds.fw_inplace(d_t, 128, n_pivots=n); e.record(); torch.cuda.synchronize()
        times_t.append(s.elapsed_time(e) / 1e3)
    res_t = d_t[:n, :n].cpu().numpy()
    del d_t, start_t; torch.cuda.empty_cache()
    # driver
    start_d = DeviceArray.empty(host.shape, dt).copy_(host)
    d_d = DeviceArray.empty(host.shape, dt)
    times_d = []
    for rep in range(4):
        d_d.copy_(start_d); cuda.synchronize()
        s = cuda.current().record_event(timing=True)
        for _ in rounds.fw_rounds(d_d, 128, n_pivots=n):
            pass
        e = cuda.current().record_event(timing=True); e.synchronize()
        times_d.append(e.seconds_since(s))
    res_d = d_d[:n, :n].to_numpy()
    del d_d, start_d
    same = np.array_equal(res_t, res_d)
    tt, td = statistics.median(times_t[1:]), statistics.median(times_d[1:])
    print(f"{dname} n={n}: torch {tt:.3f} s ({n**3/tt/1e12:.2f} T/s), driver {td:.3f} s ({n**3/td/1e12:.2f} T/s), "
          f"driver/torch {td/tt:.3f}, results equal: {same}", flush=True)
    assert same
for dn in ("int32", "int16"):
    print(f"ceiling {dn}: {ceiling.best_ceiling(dn)/1e12:.2f} T updates/s", flush=True)
