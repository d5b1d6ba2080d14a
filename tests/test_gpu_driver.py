"""The torch-free GPU path: CUDA driver arrays, Triton kernels compiled ahead and launched by apsp,
and the FW skeleton over `apsp.gpu.fw.GPUEngine` on `apsp.gpu.fw.DriverRuntime`.

Without a GPU: views of device memory, the launcher's specialisation and the offline compile of
every kernel it launches (Triton ships the assembler). On a GPU: whole solves on the driver
engine equal to the oracle and, bit for bit, to the torch engine; and a process that never
imports torch.
"""
from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import HAS_CUDA, HAS_TRITON
from randgraphs import random_graph
from randgraphs import sentinel_path

import apsp
from apsp import exactness
from apsp.cpu.oracle import floyd_warshall_reference
from apsp.graph import Graph

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_TRITON, reason="torch/triton not installed")]
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")


def _array(shape=(64, 64), dtype=np.int16, ptr=4096):
    from apsp.gpu.devarray import DeviceArray

    rows, cols = shape
    return DeviceArray(SimpleNamespace(ptr=ptr), 0, shape, (cols, 1), dtype)


def test_views_address_the_same_bytes_as_numpy_views():
    host = np.arange(64 * 64, dtype=np.int16).reshape(64, 64)
    a = _array()
    for view, want in [(a[3:9, 10:42], host[3:9, 10:42]), (a[:, 10:42].t(), host[:, 10:42].T),
                       (a[5:7], host[5:7]), (a[:, 2:6].view(np.int32), host[:, 2:6].view(np.int32))]:
        assert view.shape == want.shape
        assert view.data_ptr() - 4096 == want.__array_interface__["data"][0] - host.ctypes.data
        assert tuple(s * view.dtype.itemsize for s in view.stride()) == want.strides
    with pytest.raises(ValueError):
        a[:, 1:5].view(np.int32)  # an odd column offset is not a whole int32
    with pytest.raises(ValueError):
        a[:, :4].t().view(np.int32)  # not contiguous along the last dimension


# compiled in a child process: the test session runs Triton in interpreter mode, which has no compiler
PROBE = """
import json, sys
from types import SimpleNamespace
import numpy as np
from apsp.gpu import devarray, fw, minplus


def array(shape=(256, 256), dtype=np.int32, ptr=4096):
    return devarray.DeviceArray(SimpleNamespace(ptr=ptr), 0, shape, (shape[1], 1), dtype)


out = {}
a = array()
sig, const, aligned, runtime = devarray.specialise(minplus._close_block_kernel, (a, 48, 64, 1, 1073741823),
                                                   dict(CLAMP=False, BLOCK=64))
names = [p.name for p in minplus._close_block_kernel.params]
odd = array((8, 8), np.int16, ptr=4098)
out["close"] = dict(sig=sig, const={k: v for k, v in const.items() if k == "stride_n"},
                    aligned=sorted(names[i] for i in aligned), runtime=[k for k, _ in runtime],
                    odd=list(devarray.specialise(minplus._close_block_kernel, (odd, 16, 16, 1, 5),
                                                 dict(CLAMP=True, BLOCK=16))[2]))
for dtype in ("int16", "int32", "float32"):
    a = array(dtype=dtype)
    inf = minplus.inf_for(a)
    config = minplus.MinplusConfig(*minplus.MINPLUS_CONFIG[dtype])
    calls = [
        (minplus._minplus_kernel, (a, a.t(), a, a, 256, 256, 128, 256, 1, 1, 256, 256, 1, 256, 1, inf),
         dict(CLAMP=False, HAS_C2=False, EVEN=True, BLOCK_M=config.block_m, BLOCK_N=config.block_n, GROUP_M=8,
              ASM=minplus.asm_mode(dtype, (9, 0)), UNROLL=config.unroll, WIDE=False, CHUNK_A=config.chunk_a,
              STAGES=config.stages), config.warps),
        (minplus._close_block_kernel, (a, 128, 256, 1, inf), dict(CLAMP=False, BLOCK=128), 8),
        (fw._fill_kernel, (a, 65536, inf), dict(BLOCK=4096), 4),
        (fw._scatter_edges_kernel, (a, array((1, 257), np.int64), array((1, 999)), a, 256),
         dict(BLOCK=128), 4),
    ]
    if dtype != "float32":
        calls.append((fw._finalize_kernel, (a, 250, 256, inf - 1, -1, inf - 100, inf, array((1, 1))),
                      dict(CHECK=True, MARK=True, BLOCK=fw.TILE), 4))
    if dtype == "int16":
        calls.append((minplus._duplicate_pairs_kernel, (a, array(), 256, 256, 256, 1), dict(BLOCK=32), 4))
    for fn, args, kwargs, warps in calls:
        sig, const, aligned, runtime = devarray.specialise(fn, args, kwargs)
        cubin, name, shared, threads, params = devarray.compile_kernel(fn, sig, const, aligned, warps, 3, 90)
        out[dtype + " " + name] = dict(cubin=len(cubin), threads=threads, warps=warps, params=params,
                                       runtime=len(runtime))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probe():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    import json

    return json.loads(run.stdout.strip().splitlines()[-1])


def test_specialisation_follows_tritons_launcher(probe):
    close = probe["close"]
    assert close["sig"]["t_ptr"] == "*i32" and close["sig"]["size"] == "i32" and close["sig"]["INF"] == "i32"
    assert close["const"] == {"stride_n": 1} and close["sig"]["stride_n"] == "constexpr"  # 1 is a constant
    assert close["aligned"] == ["size", "stride_m", "t_ptr"]  # a 16-aligned pointer, 16-divisible integers
    assert close["runtime"] == ["*i32", "i32", "i32", "i32"]
    assert close["odd"] == [1, 2]  # a pointer off by 2 bytes is not aligned


STORE_PROBE = """
import json
import numpy as np
from apsp.gpu import devarray, fw

sig = {"d_ptr": "*i32", "total": "i32", "value": "i32"}
first = devarray._compile_or_load(fw._fill_kernel, sig, {"BLOCK": 4096}, (0,), 4, 3, 90)
real_compile = devarray.compile_kernel
calls = []
def counting_compile(*args):
    calls.append(args[2])
    return real_compile(*args)
devarray.compile_kernel = counting_compile
again = devarray._compile_or_load(fw._fill_kernel, sig, {"BLOCK": 4096}, (0,), 4, 3, 90)
other = devarray._compile_or_load(fw._fill_kernel, sig, {"BLOCK": 2048}, (0,), 4, 3, 90)
for meta in devarray._store_dir().glob("*.json"):
    meta.write_text("{")  # a damaged description: compiled again, not trusted
damaged = devarray._compile_or_load(fw._fill_kernel, sig, {"BLOCK": 4096}, (0,), 4, 3, 90)
print(json.dumps(dict(same=again == first, other=other[0] != first[0], damaged=damaged == first,
                      compiles=[c["BLOCK"] for c in calls])))
"""


def test_compiled_kernels_are_kept_between_processes(tmp_path):
    """A kernel compiled once is loaded from the store afterwards (Triton's first compile in a
    process costs most of a small GPU solve); another specialisation or a damaged entry compiles."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path)
    run = subprocess.run([sys.executable, "-c", STORE_PROBE], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    import json

    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got == {"same": True, "other": True, "damaged": True, "compiles": [2048, 4096]}
    assert len(list((tmp_path / "apsp-driver").glob("*.cubin"))) == 2


NOTICE_PROBE = """
import json, sys, threading
from apsp import jit
from apsp.gpu import devarray, fw

jit.notify_compiles(sys.stdout)
sig = {"d_ptr": "*i32", "total": "i32", "value": "i32"}
elsewhere = threading.Thread(target=devarray._compile_or_load,
                             args=(fw._fill_kernel, sig, {"BLOCK": 1024}, (0,), 4, 3, 90))
elsewhere.start(); elsewhere.join()
after_thread = jit.compile_seconds()
devarray._compile_or_load(fw._fill_kernel, sig, {"BLOCK": 4096}, (0,), 4, 3, 90)
after_compile = jit.compile_seconds()
devarray._compile_or_load(fw._fill_kernel, sig, {"BLOCK": 4096}, (0,), 4, 3, 90)
print(json.dumps([after_thread, after_compile, jit.compile_seconds()]))
"""


def test_a_gpu_compile_the_user_waits_for_is_announced_and_booked(tmp_path):
    """A Triton compile on the main thread prints the compile notice once and counts as compile
    time; one on a warm-up thread does neither; a kernel from the store costs no compile time."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path)
    run = subprocess.run([sys.executable, "-c", NOTICE_PROBE], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    import json

    lines = run.stdout.strip().splitlines()
    assert lines.count("apsp: compiling GPU kernels (first run only; cached for later runs)...") == 1, lines
    after_thread, after_compile, after_load = json.loads(lines[-1])
    assert after_thread == 0.0 and after_compile > 0.0 and after_load == after_compile


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_every_launched_kernel_compiles_offline(probe, dtype):
    """The kernels the driver engine launches, in the specialisations a solve uses, compile for
    sm_90 without a GPU; the parameter count includes Triton's own trailing pointers."""
    kernels = {k.split(" ", 1)[1]: v for k, v in probe.items() if k.startswith(dtype + " ")}
    want = {"_minplus_kernel", "_close_block_kernel", "_fill_kernel", "_scatter_edges_kernel"}
    want |= {"_finalize_kernel"} if dtype != "float32" else set()
    want |= {"_duplicate_pairs_kernel"} if dtype == "int16" else set()
    assert set(kernels) == want
    for name, k in kernels.items():
        assert k["cubin"] > 0 and k["threads"] == 32 * k["warps"], name
        assert k["runtime"] <= k["params"] <= k["runtime"] + 2, (name, k)


def test_the_torch_free_path_is_taken_only_where_it_can_serve(monkeypatch):
    from apsp.engine import SolveOptions
    from apsp.plan import gpu_runtime as default_runtime

    monkeypatch.delenv("APSP_GPU_RUNTIME", raising=False)
    plain = SolveOptions.build(dtype=np.dtype(np.int32))
    assert "torch" in sys.modules and default_runtime(plain) == "torch"  # torch imported: its runtime
    monkeypatch.setenv("APSP_GPU_RUNTIME", "driver")
    assert default_runtime(plain) == "driver"
    monkeypatch.setenv("APSP_GPU_RUNTIME", "torch")
    assert default_runtime(plain) == "torch"


def test_the_engine_and_the_plan_import_no_torch():
    """The one in-core engine serves the torch-free runtime, and the plan reads the GPU footprint."""
    code = "import sys, apsp.plan, apsp.gpu.fw; assert 'torch' not in sys.modules, 'torch imported'"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


def test_the_solver_takes_the_runtime_the_options_name():
    from apsp.engine import SolveOptions
    from apsp.gpu import fw

    g = random_graph(np.random.default_rng(1), 5, 0.5)
    with pytest.raises(ValueError, match="unknown GPU runtime"):
        SolveOptions.build(dtype=np.dtype(np.int32), runtime="cuda")
    with pytest.raises(ValueError, match="distances with the blocked variant only"):
        fw.solve(g, SolveOptions.build(dtype=np.dtype(np.int32), runtime="driver", successors=True))
    out = fw.solve(g, SolveOptions.build(dtype=np.dtype(np.int32), runtime="torch", progress=False))
    assert "gpu_runtime" not in out.info


# ----------------------------------------------------------------------------- on a GPU
def _solve(g, runtime, monkeypatch, **kw):
    monkeypatch.setenv("APSP_GPU_RUNTIME", runtime)
    return apsp.shortest_paths(g, method="fw", backend="gpu", **kw)


@needs_cuda
@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 7, 130, 700])
def test_driver_engine_equals_the_torch_engine_and_the_oracle(rng, monkeypatch, dtype, n):
    negative = dtype != "int16" and bool(rng.integers(2))
    g = random_graph(rng, n, min(1.0, 8 / n), lo=1, hi=50, negative=negative,
                     floats=dtype.startswith("float"))
    if rng.integers(2):  # dense input: the start matrix is copied, not scattered
        g = Graph.from_dense(np.where(np.isfinite(g.fw_matrix(np.float64)), g.fw_matrix(np.float64), np.inf),
                             null_value=np.inf)
    r = _solve(g, "driver", monkeypatch, dtype=dtype)
    assert r.info["gpu_runtime"].startswith("cuda driver")
    t = _solve(g, "torch", monkeypatch, dtype=dtype)
    assert "gpu_runtime" not in t.info
    want = exactness.finalize_unreachable(floyd_warshall_reference(g.fw_matrix(dtype)), g.has_negative_weights)
    if dtype.startswith("float"):
        # floats: within rounding of the largest distance (the engines may round in another order)
        rtol = 1e-5 if dtype == "float32" else 1e-12
        scale = float(np.abs(want[np.isfinite(want)]).max(initial=1.0))
        for got in (r.distances, t.distances):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)
    else:
        np.testing.assert_array_equal(r.distances, t.distances)
        np.testing.assert_array_equal(r.distances, want)
    assert set(r.timings) >= {"h2d", "compute", "d2h"}


@needs_cuda
def test_driver_engine_large_result_through_the_staging_buffers(rng, monkeypatch):
    g = random_graph(rng, 4500, 0.002, lo=1, hi=1000)  # 81 MB of int32: the pinned pipeline
    r = _solve(g, "driver", monkeypatch, dtype="int32")
    want = apsp.shortest_paths(g, method="dijkstra", backend="cpu", dtype="int32").distances
    np.testing.assert_array_equal(r.distances, want)


@needs_cuda
@pytest.mark.parametrize("total", [int(exactness.inf_value(np.int16)) - 1, int(exactness.inf_value(np.int16)),
                                   int(exactness.inf_value(np.int16)) + 1])
def test_driver_engine_cutoff_check_and_retry(rng, monkeypatch, total):
    from apsp import costs

    # the engine's own check and the retry: no searches before the solve rule int16 out
    monkeypatch.setattr(costs, "worth_searching", lambda *args, **kw: False)
    g = sentinel_path(rng, total, 300)
    r = _solve(g, "driver", monkeypatch)
    want = apsp.shortest_paths(g, method="dijkstra", backend="cpu", dtype="int64").distances

    def unreachable_as_minus_one(d):  # each dtype marks unreachable pairs with its own largest value
        return np.where(d == exactness.unreachable_value(d.dtype), -1, d.astype(np.int64))

    np.testing.assert_array_equal(unreachable_as_minus_one(r.distances), unreachable_as_minus_one(want))
    assert r.info["dtype_tried"][0] == "int16"


@needs_cuda
def test_driver_engine_negative_cycle(rng, monkeypatch):
    from apsp.errors import NegativeCycleError

    g = random_graph(rng, 90, 0.1, lo=1, hi=9)
    m = g.fw_matrix(np.float64)
    m[5, 6], m[6, 5] = -4, 1
    bad = Graph.from_dense(m, null_value=np.inf)
    with pytest.raises(NegativeCycleError) as err:
        _solve(bad, "driver", monkeypatch, dtype="int32")
    assert {5, 6} <= set(err.value.vertices)


@needs_cuda
def test_driver_engine_resumes_a_checkpoint(rng, monkeypatch, tmp_path):
    g = random_graph(rng, 700, 0.01, lo=1, hi=40)
    ck = tmp_path / "state.ckpt"

    def stop(done):
        if done >= 256:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _solve(g, "driver", monkeypatch, dtype="int32", checkpoint=str(ck), checkpoint_every=1e9, on_round=stop)
    r = _solve(g, "driver", monkeypatch, dtype="int32", checkpoint=str(ck), resume=True)
    want = apsp.shortest_paths(g, method="dijkstra", backend="cpu", dtype="int32").distances
    np.testing.assert_array_equal(r.distances, want)
    assert r.info["resumed_from_vertex"] >= 256


@needs_cuda
def test_a_homework_run_never_imports_torch(tmp_path):
    """The homework command on the GPU, in a fresh process: the same bytes as the CPU backend's, and
    torch never imported (the point of the path)."""
    src = tmp_path / "g.txt"
    subprocess.run([sys.executable, "-m", "apsp", "gen", "600", "--density", "0.05", "--weights", "0", "100",
                    "--seed", "3", "-o", str(src)], check=True)
    cpu = tmp_path / "cpu.out"
    subprocess.run([sys.executable, "-m", "apsp", str(src), str(cpu), "64", "--backend", "cpu", "-q"], check=True)
    # the CLI leaves through os._exit after the atexit handlers: the answer is printed by one; an
    # import hook names whoever imports torch
    probe = ("import atexit, runpy, sys, traceback\n"
             "class Watch:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name == 'torch':\n"
             "            traceback.print_stack()\n"
             "        return None\n"
             "sys.meta_path.insert(0, Watch())\n"
             "atexit.register(lambda: print('torch imported:', 'torch' in sys.modules, flush=True))\n"
             "sys.argv = ['apsp', sys.argv[1], sys.argv[2], '64', '--backend', 'gpu', '-q']\n"
             "runpy.run_module('apsp', run_name='__main__')\n")
    gpu = tmp_path / "gpu.out"
    env = {k: v for k, v in os.environ.items() if k != "APSP_GPU_RUNTIME"}
    out = subprocess.run([sys.executable, "-c", probe, str(src), str(gpu)], capture_output=True, text=True,
                         env=env, check=True)
    assert "torch imported: False" in out.stdout, out.stdout + out.stderr
    assert gpu.read_bytes() == cpu.read_bytes()
