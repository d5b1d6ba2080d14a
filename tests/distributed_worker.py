"""Run under ``mpiexec`` by tests/test_distributed.py: distributed solves checked on rank 0.

Usage: ``mpiexec -n P python tests/distributed_worker.py SPEC_JSON``. SPEC holds a
``seed`` and a list of ``cases``; rank 0 draws each random graph, every rank
calls `apsp.distributed.solve`, and rank 0 compares with the single-process
blocked solve (`apsp.cpu.blocked.fw_inplace`, same block) and the oracle.
Prints one JSON line (``{"ok": bool, "failures": [...]}``) on rank 0; exit 1 on
any failure. A case may also name an ``output`` file (written in parallel and
compared byte for byte with the serial writer) or ``expect_error``.
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

from apsp import exactness  # noqa: E402
from apsp.cpu.oracle import floyd_warshall_reference  # noqa: E402
from apsp.errors import NegativeCycleError  # noqa: E402
from apsp.graph import Graph  # noqa: E402


def draw_graph(rng, case) -> Graph:
    if case.get("form") == "path":
        from randgraphs import sentinel_path

        return sentinel_path(rng, case["total"], case["n"] - 1)
    n = case["n"]
    lo, hi = case.get("weights", (0, 20))
    if case.get("fractional"):
        w = rng.uniform(lo, hi, size=(n, n)).round(3)
    else:
        w = rng.integers(lo, hi + 1, size=(n, n)).astype(np.int64)
    mask = rng.random((n, n)) < case.get("density", 0.3)
    if case.get("form", "edges") == "dense":
        # inf marks "no edge", so weight-0 edges stay edges
        return Graph.from_dense(np.where(mask, w, np.inf), null_value=np.inf)
    rows, cols = np.nonzero(mask)
    from apsp.graph import EdgeList

    return Graph.from_edges(EdgeList(n, rows, cols, w[rows, cols]))


def expected_dtype(g: Graph, requested, block):
    """``(the dtype the dtype plan must end in, the one it solves in)``, judged from the exact
    answer (``(None, None)``: DtypeError)."""
    plan = exactness.dtype_attempts(g.distance_bound, g.has_negative_weights, g.integral, g.max_abs_weight,
                                    requested)
    if plan[0].cast_to is not None:  # solved in the worst case's dtype, then a checked cast
        wide = serial_solve(g, plan[0].dtype, block)
        if wide is None:  # a negative cycle, found before any cast
            return plan[0].cast_to, plan[0].dtype
        reach = wide[wide != exactness.unreachable_value(wide.dtype)].astype(np.int64)
        fits = not reach.size or np.abs(reach).max() <= exactness.reachable_limit(plan[0].cast_to,
                                                                               g.has_negative_weights)
        return (plan[0].cast_to, plan[0].dtype) if fits else (None, None)
    if not any(a.checked for a in plan):
        return plan[0].dtype, plan[0].dtype
    exact = serial_solve(g, np.int64, block)
    finite = exact[exact != exactness.unreachable_value(np.int64)]
    largest = int(finite.max()) if finite.size else 0
    for attempt in plan:
        if not attempt.checked or largest < exactness.cutoff_band(attempt.dtype, g.max_abs_weight)[0]:
            return attempt.dtype, attempt.dtype
    return None, None


def serial_solve(g: Graph, dtype, block):
    from apsp.cpu.blocked import fw_inplace

    d = g.fw_matrix(dtype)
    fw_inplace(d, block=block, negative=g.has_negative_weights, progress=False)
    if (np.diagonal(d) < 0).any():
        return None
    return exactness.finalize_unreachable(d, g.has_negative_weights)


def oracle_solve(g: Graph, dtype):
    d = floyd_warshall_reference(g.fw_matrix(dtype))
    if (np.diagonal(d) < 0).any():
        return None
    return exactness.finalize_unreachable(d, g.has_negative_weights)


def serial_bytes(dist, output) -> bytes:
    """What the single-process writer (`apsp.io.write_distances`) puts in a file like ``output``."""
    from apsp.io import write_distances

    path = os.path.join(os.path.dirname(output), "serial-" + os.path.basename(output))
    write_distances(path, dist)
    with open(path, "rb") as f:
        data = f.read()
    os.remove(path)
    return data


def run_case(comm, rng, case, failures):
    from apsp.distributed import solve

    g = draw_graph(rng, case) if comm.rank == 0 else None
    output = case.get("output")
    error = None
    try:
        result = solve(g, comm, block_size=case["block"], dtype=case.get("dtype"),
                       backend=case.get("backend", "cpu"), cuda_aware=case.get("cuda_aware", "auto"),
                       grid=case.get("grid"), output=output, poll_pieces=case.get("poll", 4),
                       lookahead=case.get("lookahead", True))
    except Exception as exc:  # noqa: BLE001 - compared below
        error, result = exc, None
    if comm.rank != 0:
        return
    label = {k: v for k, v in case.items()}
    dt, solve_dt = expected_dtype(g, case.get("dtype"), case["block"])
    if dt is None:
        if not isinstance(error, exactness.DtypeError):
            failures.append({**label, "problem": f"expected DtypeError after the check, got {error!r}"})
        return
    want = serial_solve(g, solve_dt, case["block"])
    # "oracle": false skips the O(n^3) pure reference (a minute at n = 3000); the serial blocked
    # solve it would check is itself checked against the oracle by the unit tests
    ref = oracle_solve(g, solve_dt) if case.get("oracle", True) else want
    # fractional floats: the oracle sums in another order, so only close; integers: equal
    same = np.allclose if case.get("fractional") else np.array_equal
    if (want is None) != (ref is None) or (want is not None and not same(want, ref)):
        failures.append({**label, "problem": "serial solve disagrees with the oracle"})
        return
    if want is None:
        if not isinstance(error, NegativeCycleError):
            failures.append({**label, "problem": f"expected NegativeCycleError, got {error!r}"})
        return
    if error is not None:
        failures.append({**label, "problem": f"raised {type(error).__name__}: {error}"})
        return
    if dt != solve_dt:
        want = exactness.cast_checked(want, dt, g.has_negative_weights)
    if output is None:
        got = result.distances
        if got.dtype != want.dtype or not np.array_equal(got, want):
            bad = np.argwhere(got != want)[:3].tolist() if got.shape == want.shape else got.shape
            failures.append({**label, "problem": f"distances differ from the serial solve at {bad}"})
        return
    kind = "npy" if output.endswith(".npy") else "homework"
    with open(output, "rb") as f:
        data = f.read()
    if data != serial_bytes(want, output):
        failures.append({**label, "problem": f"{kind} output differs from the serial writer's bytes"})
    leftovers = [p for p in os.listdir(os.path.dirname(output) or ".") if ".tmp" in p]
    if leftovers:
        failures.append({**label, "problem": f"temporary files left: {leftovers}"})
    os.remove(output)


def main() -> int:
    spec = json.loads(sys.argv[1])
    comm = MPI.COMM_WORLD
    rng = np.random.default_rng(spec["seed"])
    failures = []
    for case in spec["cases"]:
        run_case(comm, rng, case, failures)
    if comm.rank == 0:
        print(json.dumps({"ok": not failures, "failures": failures, "ranks": comm.size}), flush=True)
    ok = comm.bcast(not failures if comm.rank == 0 else None, root=0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
