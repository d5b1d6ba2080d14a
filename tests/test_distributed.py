"""MPI-distributed blocked Floyd-Warshall (apsp.distributed).

Layout arithmetic is tested in-process (no MPI). Everything else launches
``mpiexec -n 1, 2, 4`` (oversubscribed on small machines) running
tests/distributed_worker.py or the CLI, on fresh random graphs: distances must
be IDENTICAL to the single-process blocked solve, outputs byte-identical to the
serial writers, and failing ranks must end the job cleanly.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apsp.distributed.layout import BlockCyclic, complement, split_ranges
from apsp.distributed.profile import StageTimer, format_rank_table

REPO = Path(__file__).resolve().parents[1]
WORKER = REPO / "tests" / "distributed_worker.py"
FAULT_ENV = "APSP_DISTRIBUTED_TEST_FAULT"


# ---------------------------------------------------------------------------
# layout (pure numpy)
# ---------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 70), block=st.integers(1, 12), pr=st.integers(1, 4), pc=st.integers(1, 4))
def test_block_cyclic_layout_partitions_the_matrix(n, block, pr, pc):
    lay = BlockCyclic(n, block, (pr, pc))
    for axis, procs in ((0, pr), (1, pc)):
        seen = np.concatenate([lay.global_indices(p, axis) for p in range(procs)])
        assert np.array_equal(np.sort(seen), np.arange(n))  # every index exactly once
        for p in range(procs):
            g = lay.global_indices(p, axis)
            assert len(g) == lay.local_extent(p, axis)
            assert np.all(np.diff(g) > 0)  # local order is global order
            owner, local = lay.locate(g, axis)
            assert np.all(owner == p) and np.array_equal(local, np.arange(len(g)))
            for t in lay.local_tiles(p, axis):
                a, b = lay.local_range(t, axis)
                assert np.array_equal(g[a:b], np.arange(t * block, t * block + lay.tile_size(t)))
    for rank in range(lay.size):
        coords = lay.coords_of(rank)
        assert lay.rank_of(*coords) == rank
        li, lj, verts = lay.local_diagonal(coords)
        assert np.array_equal(lay.global_indices(coords[0], 0)[li], verts)
        assert np.array_equal(lay.global_indices(coords[1], 1)[lj], verts)


@settings(max_examples=100, deadline=None)
@given(extent=st.integers(0, 50), cuts=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 10)), max_size=3),
       pieces=st.integers(1, 5), minimum=st.integers(1, 8))
def test_complement_and_split_ranges(extent, cuts, pieces, minimum):
    excluded = [(a, min(extent, a + w)) for a, w in cuts if a < extent]
    keep = complement(extent, excluded)
    covered = np.zeros(extent, dtype=int)
    for a, b in keep:
        assert a < b
        covered[a:b] += 1
    for a, b in excluded:
        covered[a:b] += 10
    assert np.all((covered == 1) | (covered >= 10))  # kept exactly where not excluded
    parts = split_ranges(keep, pieces, minimum)
    flat = [i for a, b in parts for i in range(a, b)]
    assert flat == [i for a, b in keep for i in range(a, b)]


def test_stage_timer_and_rank_table():
    timer = StageTimer()
    with timer("compute"):
        sum(range(1000))
    timer.add("comm", 0.5)
    summary = timer.summary()
    assert summary["comm"] == 0.5 and summary["compute"] > 0 and summary["total"] >= summary["compute"]
    table = format_rank_table([summary, {**summary, "comm": 2.0}])
    assert table.splitlines()[-1].startswith("max") and "2.0000" in table.splitlines()[-1]


def test_doctests_of_the_mpi_free_modules():
    import doctest

    import apsp.distributed.layout
    import apsp.distributed.local
    import apsp.distributed.profile

    for module in (apsp.distributed.layout, apsp.distributed.local, apsp.distributed.profile):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_importing_distributed_does_not_start_mpi():
    code = ("import sys, apsp, apsp.distributed, apsp.distributed.layout; "
            "assert 'mpi4py' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


# ---------------------------------------------------------------------------
# launching MPI
# ---------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _launcher():
    """(mpiexec command, extra args, extra env), or None when MPI is missing."""
    exe = shutil.which("mpiexec")
    if exe is None or importlib.util.find_spec("mpi4py") is None:
        return None
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    if "Open MPI" in version or "OpenRTE" in version:
        # Open MPI refuses more ranks than cores (and root) unless told
        return exe, ["--oversubscribe"], {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                                          "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    return exe, [], {}  # MPICH / Intel MPI (hydra) oversubscribe as is


def mpirun(ranks: int, args, *, env=None, cwd=None, timeout=150):
    launcher = _launcher()
    if launcher is None:
        pytest.skip("mpiexec or mpi4py not installed")
    exe, extra, extra_env = launcher
    base = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    full_env = {**base, **extra_env, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([exe, *extra, "-n", str(ranks), sys.executable, *map(str, args)], cwd=cwd or REPO,
                          env=full_env, capture_output=True, text=True, timeout=timeout)


def run_worker(ranks: int, cases, seed: int, env=None):
    spec = json.dumps({"seed": seed, "cases": cases})
    out = mpirun(ranks, [WORKER, spec], env=env)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    report = json.loads(lines[-1]) if lines else None
    assert out.returncode == 0 and report and report["ok"], (
        f"seed={seed} ranks={ranks} rc={out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return report


def _cases(ranks: int, rng: np.random.Generator, tmp: Path):
    """Edge cases first (n below the tile count, ranks without tiles, both grid
    orientations, every dtype, negative weights and cycles), then random ones."""
    cases = [
        {"n": 1, "block": 1},
        {"n": 2, "block": 1},                            # 2 tiles, up to 4 ranks: some own nothing
        {"n": 3, "block": 4},                            # one tile for every rank count
        {"n": 5, "block": 2, "form": "dense"},
        {"n": 13, "block": 3, "dtype": "int16", "density": 0.6},
        {"n": 29, "block": 6, "dtype": "int64", "weights": [-2, 30], "density": 0.08},
        {"n": 21, "block": 4, "weights": [-6, 8], "density": 0.5},  # negative cycles likely
        {"n": 27, "block": 5, "dtype": "float64", "fractional": True, "weights": [0, 10]},
        {"n": 19, "block": 4, "dtype": "float32", "form": "dense", "weights": [-1, 20], "density": 0.2},
        {"n": 23, "block": 3, "poll": 1},
        {"n": 24, "block": 5, "lookahead": False, "weights": [-1, 9], "density": 0.2},
    ]
    if ranks > 1:
        cases += [{"n": 17, "block": 3, "grid": [1, ranks]}, {"n": 17, "block": 3, "grid": [ranks, 1]}]
    # parallel writers against the serial writer's bytes (unreachable pairs, negative values, floats)
    cases += [{"n": 26, "block": 4, "density": 0.1, "weights": [-1, 50], "output": str(tmp / "d.txt")},
              {"n": 3, "block": 4, "output": str(tmp / "d.txt")},
              {"n": 22, "block": 3, "dtype": "float64", "fractional": True, "output": str(tmp / "d.txt")},
              {"n": 19, "block": 5, "dtype": "int16", "output": str(tmp / "d.npy")},
              {"n": 2, "block": 1, "dtype": "float32", "output": str(tmp / "d.npy")}]
    for _ in range(4):
        n = int(rng.integers(1, 45))
        cases.append({"n": n, "block": int(rng.integers(1, 10)), "density": float(rng.uniform(0.02, 0.6)),
                      "weights": [int(rng.integers(-3, 1)), int(rng.integers(1, 60))],
                      "dtype": str(rng.choice(["int16", "int32", "int64", "float64"])),
                      "form": str(rng.choice(["edges", "dense"]))})
    return cases


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_distributed_equals_single_process_solve(ranks, tmp_path, random_seed):
    run_worker(ranks, _cases(ranks, np.random.default_rng(random_seed), tmp_path), random_seed)


#: run by every rank: two GPUs on the host (the count and the device mocked, so that the check runs
#: anywhere); what each rank's plan, statistics and distributed FW engine would run on, to rank 0
RANK_DEVICES = """
import json
import numpy as np
from mpi4py import MPI
import apsp.gpu, apsp.gpu.tiles, apsp.plan, apsp.stats
from apsp.distributed import ProcessGrid, distance_stats
from apsp.distributed.local import make_engine

apsp.gpu.device_status = lambda: (True, "NVIDIA H200")
apsp.gpu._cuda_device_count = lambda: 2
apsp.gpu.device_memory = lambda device=None: (8 << 30, 16 << 30)
comm = MPI.COMM_WORLD
seen = {}
real = apsp.stats.distance_stats

def local_stats(g, sources, **options):
    seen["stats"] = options.get("device")
    return real(g, sources, **{**options, "backend": "cpu"})

apsp.stats.distance_stats = local_stats
apsp.gpu.tiles.gpu_tiles = lambda dtype, negative, device, aware: seen.setdefault("fw", device)
g = [(i, i + 1) for i in range(99)]
p = apsp.plan.make_plan(apsp.as_graph(g), method="fw", backend="gpu")
seen["plan"] = p.machine.device
seen["step"] = p.steps[0].opts.device
stats = distance_stats(g, directed=False)
grid = ProcessGrid.create(comm)
make_engine("gpu", grid, False, np.dtype(np.int32), False)
grid.free()
everyone = comm.gather(seen, root=0)
if comm.rank == 0:
    print(json.dumps({"ranks": everyone, "diameter": stats.diameter()}))
"""


@pytest.mark.mpi
def test_each_rank_runs_on_its_own_gpu(tmp_path):
    """Two ranks on a host with two GPUs: each rank's plan, its share of the statistics and its
    distributed FW engine name the GPU of its node rank (not all GPU 0)."""
    script = tmp_path / "rank_devices.py"
    script.write_text(RANK_DEVICES)
    out = mpirun(2, [script])
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["diameter"] == 99
    for rank, seen in enumerate(report["ranks"]):
        assert seen == {"plan": f"cuda:{rank}", "step": f"cuda:{rank}", "stats": f"cuda:{rank}",
                        "fw": f"cuda:{rank}"}, rank


# ---------------------------------------------------------------------------
# the command line, outputs and failures
# ---------------------------------------------------------------------------

def _homework_graph(path: Path, rng: np.random.Generator, n: int, m: int) -> None:
    src = rng.integers(1, n + 1, size=m)
    dst = rng.integers(1, n + 1, size=m)
    keep = src != dst
    w = rng.integers(0, 101, size=m)
    lines = [f"{n} {int(keep.sum())}"] + [f"{s} {d} {x}" for s, d, x in zip(src[keep], dst[keep], w[keep])]
    path.write_text("\n".join(lines) + "\n")


def _serial_cli(tmp_path: Path, args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(FAULT_ENV, None)
    return subprocess.run([sys.executable, "-m", "apsp", *map(str, args)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def _no_output(tmp_path: Path, name: str) -> None:
    left = sorted(p.name for p in tmp_path.iterdir() if p.name not in ("in.txt", "bad.txt"))
    assert not (tmp_path / name).exists() and not left, f"left behind: {left}"


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 4])
def test_cli_text_and_npy_equal_serial_bytes(ranks, tmp_path, random_seed):
    seed = random_seed
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    _homework_graph(tmp_path / "in.txt", rng, n, int(rng.integers(0, 4 * n)))
    block = int(rng.integers(1, 9))
    # the serial command line and writers (integer weights: every exact method gives these bytes)
    for name in ("ref.txt", "ref.npy"):
        ref = _serial_cli(tmp_path, ["solve", "in.txt", "-o", name, "--method=reference", "--backend=cpu"])
        assert ref.returncode == 0, ref.stderr
    # backend auto (CPU here) once; importing torch on 4 oversubscribed ranks only costs time
    backend = ["--backend=cpu"] if ranks > 2 else []
    out = mpirun(ranks, ["-m", "apsp", "in.txt", "out.txt", block, "--distributed", "--profile", *backend],
                 cwd=tmp_path)
    assert out.returncode == 0, f"seed={seed}\n{out.stderr}"
    assert (tmp_path / "out.txt").read_bytes() == (tmp_path / "ref.txt").read_bytes(), f"seed={seed}"
    assert "seconds per stage and rank" in out.stderr and "compute" in out.stderr
    out = mpirun(ranks, ["-m", "apsp", "solve", "in.txt", "-o", "out.npy", "--block-size", block, "--distributed",
                         "--backend", "cpu", "--json"], cwd=tmp_path)
    assert out.returncode == 0, f"seed={seed}\n{out.stderr}"
    assert (tmp_path / "out.npy").read_bytes() == (tmp_path / "ref.npy").read_bytes(), f"seed={seed}"
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["ranks"] == ranks and len(summary["info"]["rank_timings_s"]) == ranks
    assert summary["schema_version"] == 1 and summary["method"] == "fw"


@pytest.mark.mpi
def test_bad_input_fails_before_compute_naming_rank_file_and_line(tmp_path):
    (tmp_path / "bad.txt").write_text("3 2\n1 2 5\n2 x 7\n")
    out = mpirun(2, ["-m", "apsp", "bad.txt", "out.txt", "2", "--distributed", "--backend=cpu"], cwd=tmp_path)
    assert out.returncode != 0
    err = out.stderr
    assert "rank 0 of 2 failed while reading the input" in err and "bad.txt:3" in err, err
    assert err.count("apsp: error") == 1, err  # one line, from rank 0, not one per rank
    _no_output(tmp_path, "out.txt")


@pytest.mark.mpi
@pytest.mark.parametrize("stage, expect", [
    ("setup", "rank 1 of 2 failed while setting up the local tile engine"),
    ("compute", "rank 1 of 2 failed while computing"),
    ("write", "rank 1 of 2 failed while writing the output"),
])
def test_failing_rank_ends_job_without_output(stage, expect, tmp_path, rng):
    _homework_graph(tmp_path / "in.txt", rng, 12, 40)
    out = mpirun(2, ["-m", "apsp", "in.txt", "out.txt", "3", "--distributed", "--backend=cpu"], cwd=tmp_path,
                 env={FAULT_ENV: f"1:{stage}"})
    assert out.returncode != 0
    assert expect in out.stderr and "injected test fault" in out.stderr, out.stderr
    _no_output(tmp_path, "out.txt")


@pytest.mark.mpi
@pytest.mark.gpu
def test_gpu_engine_path_on_cpu_tensors(random_seed):
    """The GPU engine (torch tensors, staged MPI buffers, transposed column panels) on 2 ranks,
    with the Triton kernels in the interpreter; the real GPUs run the same code."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    seed = random_seed
    cases = [{"n": 9, "block": 4, "backend": "gpu", "weights": [-2, 9], "density": 0.4},
             {"n": 6, "block": 5, "backend": "gpu", "grid": [1, 2], "dtype": "int32"},
             {"n": 3, "block": 4, "backend": "gpu", "dtype": "float32"},  # one thin tile, padded
             {"n": 8, "block": 4, "backend": "gpu", "dtype": "int16"}]  # whole tiles: nothing padded
    run_worker(2, cases, seed, env={"TRITON_INTERPRET": "1"})


INF16, INF32 = int(np.iinfo(np.int16).max // 2), int(np.iinfo(np.int32).max // 2)
#: paths of total length one short of, at and one past each candidate's sentinel (dtype from the data)
BOUNDARY_CASES = [{"n": 31, "block": 4, "form": "path", "total": inf + delta}
                  for inf in (INF16, INF32) for delta in (-1, 0, 1)]


@pytest.mark.mpi
def test_distributed_dtype_from_the_data_at_the_sentinels(tmp_path, random_seed):
    """Every rank checks its tiles; all widen together, and the answer is exact; a requested dtype
    the distances do not fit is refused after the check. Where no check can tell (negative
    weights, a weight as large as the sentinel), the worst case's dtype is solved in and every
    rank casts its tiles after checking them."""
    cases = BOUNDARY_CASES + [{"n": 31, "block": 5, "form": "path", "total": INF16 + 1, "dtype": "int16"},
                              {"n": 31, "block": 5, "form": "path", "total": INF16 // 2, "dtype": "int16"},
                              {"n": 31, "block": 5, "weights": [-3, 200], "density": 0.1, "dtype": "int16"},
                              {"n": 31, "block": 5, "weights": [-3, 200], "density": 0.1, "dtype": "int16",
                               "output": str(tmp_path / "cast.npy")},
                              {"n": 2, "block": 1, "form": "path", "total": INF16, "dtype": "int16"}]
    run_worker(2, cases, random_seed)


@pytest.mark.mpi
@pytest.mark.gpu
def test_distributed_gpu_engine_dtype_from_the_data(random_seed):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    cases = [dict(c, backend="gpu", n=17, block=8) for c in BOUNDARY_CASES if c["total"] < INF32]
    run_worker(2, cases, random_seed, env={"TRITON_INTERPRET": "1"})


@pytest.mark.mpi
@pytest.mark.gpu
def test_scaling_benchmark_solves_ragged_n_on_the_gpu_engine(random_seed):
    """benchmarks/distributed_scaling.py pads the GPU engine's tiles as the API does; its own
    check (gathered result == single-process CPU solve) must hold."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    out = mpirun(2, [REPO / "benchmarks" / "distributed_scaling.py", "run", "--n", "37", "--block", "16",
                     "--backend", "gpu", "--check", "--seed", str(random_seed % 1000)],
                 env={"TRITON_INTERPRET": "1"})
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert out.returncode == 0 and lines and json.loads(lines[-1])["check"] is True, out.stdout + out.stderr


@pytest.mark.mpi
def test_killed_rank_ends_job_without_output(tmp_path, rng):
    """A rank killed outright (as by the OOM killer) cannot speak: the launcher ends the job."""
    _homework_graph(tmp_path / "in.txt", rng, 12, 40)
    out = mpirun(2, ["-m", "apsp", "in.txt", "out.txt", "3", "--distributed", "--backend=cpu"], cwd=tmp_path,
                 env={FAULT_ENV: "1:compute:kill"}, timeout=60)
    assert out.returncode != 0
    _no_output(tmp_path, "out.txt")
