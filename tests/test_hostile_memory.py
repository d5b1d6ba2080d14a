"""Memory-mapped files that change under a solve, budgets that every allocation honours, bombs and
stale temporaries: each a clean error (or a correct result), never SIGBUS or an allocation past
the budget the user gave."""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from test_hostile_files import tiny_fs  # noqa: F401 - the 1 MiB tmpfs fixture

from apsp import EdgeList, shortest_paths
from apsp.errors import MemoryPlanError

APSP = [sys.executable, "-m", "apsp"]


def _python(code: str, *args, timeout=300):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


# ----------------------------------------------------------------------------- scratch files
def test_scratch_disk_filling_during_an_out_of_core_solve_cannot_kill_it(tiny_fs):
    # 400 x 400 int32 = 625 KiB of scratch; as soon as the solve has made its scratch file,
    # another writer takes the rest of the disk
    code = f"""
        import numpy as np, os
        from apsp import outofcore, shortest_paths
        made = outofcore.HostMatrix.__init__
        def made_then_filled(self, *args, **kwargs):
            made(self, *args, **kwargs)
            try:
                with open(os.path.join({str(tiny_fs)!r}, "filler"), "wb") as f:
                    while True:
                        f.write(b"x" * 65536)
                        f.flush()
            except OSError:
                pass
        outofcore.HostMatrix.__init__ = made_then_filled
        rng = np.random.default_rng(3)
        n = 400
        w = np.where(rng.random((n, n)) < 0.02, rng.integers(1, 50, (n, n)), 0)
        r = shortest_paths(w, method="fw", backend="cpu", dtype="int32", out_of_core=True,
                           host_memory="1MB", scratch_dir={str(tiny_fs)!r}, block_size=32, ooc_rows=50)
        ref = shortest_paths(w, method="fw", backend="cpu", dtype="int32").distances
        print("ok" if np.array_equal(ref, r.distances) else "wrong")
        """
    r = _python(code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])
    assert os.listdir(tiny_fs) == ["filler"]  # the scratch file was unlinked


def test_two_scratch_matrices_on_a_small_disk_refuse_cleanly(tiny_fs):
    # each fits the disk's free space when asked for; together they do not
    code = f"""
        import numpy as np
        from apsp.errors import MemoryPlanError
        from apsp.outofcore import HostMatrix
        a = HostMatrix(400, np.int32, on_disk=True, scratch_dir={str(tiny_fs)!r})
        try:
            b = HostMatrix(400, np.int32, on_disk=True, scratch_dir={str(tiny_fs)!r})
            a.array[:] = 1
            b.array[:] = 1
            print("both written")
        except MemoryPlanError as exc:
            print("refused:", exc)
        """
    r = _python(code)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.startswith("refused:") and str(tiny_fs) in r.stdout and "apsp-matrix-" in r.stdout
    assert os.listdir(tiny_fs) == []


# ----------------------------------------------------------------------------- checkpoints
def test_checkpoint_truncated_while_it_is_resumed_is_a_clean_error(tmp_path):
    path = tmp_path / "c.ckpt"
    code = f"""
        import os
        import numpy as np
        from apsp import checkpoint as ck
        n = 1024
        d = np.arange(n * n, dtype=np.int32).reshape(n, n)
        header = {{"vertices_done": 0, "fingerprint": "x", "negative": False, "solver": "fw", "block": 1}}
        ck.save_checkpoint({str(path)!r}, header, lambda a, b: d[a:b], n, np.int32)
        meta = ck.read_header({str(path)!r})
        ck._CHUNK = 4 * n  # a row a read
        def write_rows(i0, i1, rows):
            if i0 == 0:  # another process cuts the file short while it is read
                os.truncate({str(path)!r}, ck.DATA_OFFSET + 4 * n)
        try:
            ck.read_rows({str(path)!r}, meta, write_rows)
            print("read")
        except ck.CheckpointError as exc:
            print("refused:", exc)
        """
    r = _python(code)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.startswith("refused:") and str(path) in r.stdout and "truncated" in r.stdout


def test_cli_resume_of_a_truncated_checkpoint_is_refused(tmp_path, rng):
    n = 60
    w = np.where(rng.random((n, n)) < 0.2, rng.integers(1, 9, (n, n)), 0)
    np.save(tmp_path / "g.npy", w)
    ck = tmp_path / "c.ckpt"

    def stop(done):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        shortest_paths(w, method="fw", backend="cpu", block_size=16, checkpoint=ck, on_round=stop)
    os.truncate(ck, ck.stat().st_size - 100)
    r = subprocess.run(APSP + ["solve", str(tmp_path / "g.npy"), "-o", str(tmp_path / "d.npy"),
                               "--method", "fw", "--checkpoint", str(ck), "--resume"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and str(ck) in r.stderr and "truncated" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
def test_stale_checkpoint_temporaries_are_removed_live_ones_kept(tmp_path, rng, resume):
    n = 40
    w = np.where(rng.random((n, n)) < 0.2, rng.integers(1, 9, (n, n)), 0)
    ck = tmp_path / "c.ckpt"
    if resume:
        def stop(done):
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            shortest_paths(w, method="fw", backend="cpu", block_size=8, checkpoint=ck, on_round=stop)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = tmp_path / f".c.ckpt.{_dead_pid()}.k3j_x9.tmp.ckpt"
        kept = tmp_path / f".c.ckpt.{live.pid}.q8w2zz.tmp.ckpt"
        other = tmp_path / f".d.ckpt.{_dead_pid()}.abcdef.tmp.ckpt"  # another checkpoint's
        for p in (stale, kept, other):
            p.write_bytes(b"\0" * 4096)
        r = shortest_paths(w, method="fw", backend="cpu", block_size=8, checkpoint=ck, resume=resume)
        assert r.info.get("resumed_from_vertex") == (8 if resume else None)
        assert not stale.exists() and kept.exists() and other.exists()
    finally:
        live.kill()
        live.wait()


# ----------------------------------------------------------------------------- budgets
def test_gzip_bomb_stops_at_the_memory_given(tmp_path):
    path = tmp_path / "bomb.txt.gz"
    with gzip.open(path, "wb") as g:
        g.write(b"2 1\n1 2 5\n")
        for _ in range(96):  # 96 MiB of blanks, about 100 kB compressed
            g.write(b" " * (1 << 20))
    code = """
        import resource, sys
        from apsp.cli import main
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rc = main(sys.argv[1:])
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
        sys.exit(rc)
        """
    r = _python(code, "solve", path, "-o", tmp_path / "d.txt", "--host-memory", "16MiB", "--backend", "cpu")
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert str(path) in r.stderr and "16.00 MiB" in r.stderr and "--host-memory" in r.stderr, r.stderr
    assert int(r.stdout.split()[-1]) < 40 << 10  # kB: stopped at the budget, not after 96 MiB


def test_path_query_honours_the_memory_given(tmp_path):
    huge = tmp_path / "huge.txt"
    huge.write_text("20000000 1\n1 2 5\n")  # 20 million vertices, one edge
    r = subprocess.run(APSP + ["path", str(huge), "--from", "1", "--to", "2", "--host-memory", "100MB"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "needs" in r.stderr and "--host-memory" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_search_is_checked_after_the_graph_fits():
    from apsp import shortest_path_between
    from apsp.sizes import memory_limit

    n, m = 100_000, 1_000_000
    rng = np.random.default_rng(0)
    e = EdgeList(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 9, m))
    with memory_limit("26MB"):  # the graph: 20 MB; a search adds its queue, labels and heap
        with pytest.raises(MemoryPlanError, match="dijkstra search"):
            shortest_path_between(e, 0, 1)
    with pytest.raises(MemoryPlanError, match="needs"):
        shortest_paths(e, sources=[0], host_memory="26MB")
    assert shortest_path_between(e, 0, 1, host_memory="200MB").length is not None


def test_graph_without_edges_is_checked_against_the_budget():
    from apsp.graph import Graph
    from apsp.sizes import memory_limit

    with memory_limit("64MB"), pytest.raises(MemoryPlanError, match="building the graph"):
        Graph.from_edges(EdgeList(10**8, [], [], []))
    with pytest.raises(MemoryPlanError, match="building the graph"):
        shortest_paths(EdgeList(10**8, [0], [1], [5]), sources=[0], host_memory="1GB")


def test_row_queries_never_order_the_whole_graph(monkeypatch):
    import apsp.dissection

    def refuse(*args, **kwargs):
        raise AssertionError("a row query ran the nested dissection")

    monkeypatch.setattr(apsp.dissection, "dissect", refuse)
    n = 300_000
    r = shortest_paths(EdgeList(n, [0], [1], [5]), sources=[0])
    assert r.method == "dijkstra" and r.distances[0, 1] == 5 and r.distances.shape == (1, n)
    grid = EdgeList(4000, np.arange(3999), np.arange(1, 4000), np.full(3999, 2))
    r = shortest_paths(grid, sources=[0, 5])
    assert r.distances[1, 3999] == 2 * 3994


def test_an_address_space_limit_caps_the_memory_available():
    code = """
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        from apsp.sizes import host_available
        print(host_available())
        """
    r = _python(code)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) < 6 << 30


@pytest.mark.slow
def test_a_result_neither_ram_nor_scratch_disk_holds_is_refused_before_the_graph_is_built(tmp_path, tiny_fs):
    # 1,200 x 1,200 one-byte distances (1.4 MB) fit neither 100 KB of RAM nor the 1 MiB scratch disk;
    # 600 x 600 (360 KB) fit the disk, so that check passes and the plan decides
    from test_hostile_files import _graph_file

    for n, refused in ((1200, True), (600, False)):
        path = tmp_path / f"g{n}.txt"
        _graph_file(path, n)
        r = subprocess.run(APSP + ["solve", str(path), "-o", str(tmp_path / "d.npy"), "--host-memory", "100KB",
                                   "--scratch-dir", str(tiny_fs), "--backend", "cpu"],
                           capture_output=True, text=True, timeout=300)
        assert ("one byte per entry" in r.stderr) == refused, r.stderr
        if refused:
            assert r.returncode == 1 and f"n = {n} vertices" in r.stderr and "scratch disk (1.00 MiB)" in r.stderr
            assert not (tmp_path / "d.npy").exists()


def test_millions_of_comment_lines_cost_no_more_than_the_file(tmp_path):
    # 10 million header comments before one edge: the header scan must not copy them into lines
    # (the decompressor's own chunks and its doubling buffer are the rest)
    import tracemalloc

    from apsp.io.edgelist import read_graph

    path = tmp_path / "comments.snap.gz"
    with gzip.open(path, "wb", compresslevel=1) as g:
        g.write(b"# Nodes: 3 Edges: 1\n")
        g.write(b"#\n" * 10_000_000)
        g.write(b"0\t2\n")
    size = 20 + 2 * 10_000_000 + 4
    tracemalloc.start()
    try:
        e = read_graph(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert e.n == 3 and e.src.tolist() == [0] and e.dst.tolist() == [2]
    assert peak < 4 * size, (peak, size)


def test_gzip_bomb_under_an_address_space_limit_without_a_budget(tmp_path):
    # no --host-memory: the default budget is what `ulimit -v` leaves, less a reserve for what
    # else the process maps (the error's message among it), never the whole limit
    import resource
    import zlib

    path = tmp_path / "bomb.txt.gz"
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)  # one gzip member of 64 MiB of blanks
    member = squeeze.compress(b"2 1\n1 2 5\n" + b" " * (64 << 20)) + squeeze.flush()
    path.write_bytes(member * 16)  # 1 GiB once decompressed (members simply follow each other)
    limit = 1536 << 20

    def capped():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    r = subprocess.run(APSP + ["solve", str(path), "-o", str(tmp_path / "d.txt"), "--backend", "cpu"],
                       capture_output=True, text=True, timeout=300, preexec_fn=capped)
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "MemoryError" not in r.stderr, r.stderr[-2000:]
    assert str(path) in r.stderr and "gzip data expand" in r.stderr, r.stderr


@pytest.mark.parametrize("fmt,suffix", [("homework", ".txt"), ("snap", ".snap"), ("mtx", ".mtx"),
                                        ("dimacs", ".gr"), ("snap", ".snap.gz")])
def test_a_reader_s_whole_working_set_fits_the_budget(tmp_path, fmt, suffix):
    # the file's bytes, its parsed rows and the ids' numbering are held together: under each
    # budget the read is refused, or its peak stays within it
    import tracemalloc

    from apsp.io import read_graph, write_graph
    from apsp.sizes import memory_limit

    rng = np.random.default_rng(5)
    n, m = 30_000, 120_000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    dst[src == dst] = (src[src == dst] + 1) % n
    path = tmp_path / f"g{suffix}"
    if fmt == "snap":  # ids with gaps: numbered by the reader
        lines = "".join(f"{a * 7}\t{b * 7}\t{c}\n" for a, b, c in zip(src.tolist(), dst.tolist(),
                                                                      rng.integers(1, 99, m).tolist()))
        (gzip.open if suffix.endswith(".gz") else open)(path, "wt").write(lines)
    else:
        write_graph(path, EdgeList(n, src, dst, rng.integers(1, 99, m)), fmt=fmt)
    read_graph(path)  # compiled kernels loaded, not counted
    size = len(gzip.decompress(path.read_bytes())) if suffix.endswith(".gz") else path.stat().st_size
    outcomes = []
    for times in (1.5, 2, 3, 4, 6, 8, 12):
        budget = int(times * size)
        tracemalloc.start()
        try:
            with memory_limit(budget):
                e = read_graph(path)
            outcomes.append("read")
            assert e.m > m * 0.99  # writers drop repeated pairs
        except MemoryPlanError as exc:
            assert str(path) in str(exc)
            outcomes.append("refused")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak <= budget, (times, outcomes[-1], peak, budget)
    assert outcomes[-1] == "read", outcomes


def test_graphml_is_read_within_the_budget_or_refused(tmp_path):
    # 100,000 small nodes compress to little and cost networkx hundreds of bytes each: counted
    # in one streaming pass before the document is parsed
    import tracemalloc

    from apsp.io import read_graph
    from apsp.sizes import memory_limit

    pytest.importorskip("networkx")
    path = tmp_path / "many.graphml.gz"
    body = "".join(f'<node id="n{i}"/>' for i in range(100_000)) + '<edge source="n0" target="n1"/>'
    with gzip.open(path, "wt") as g:
        g.write('<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
                f'<graph edgedefault="directed">{body}</graph></graphml>')
    outcomes = []
    for budget in (20 << 20, 60 << 20, 300 << 20):
        tracemalloc.start()
        try:
            with memory_limit(budget):
                e = read_graph(path)
            outcomes.append("read")
            assert e.n == 100_000 and e.m == 1 and e.labels[[0, 1]].tolist() == ["n0", "n1"]
        except MemoryPlanError as exc:
            assert str(path) in str(exc) and "GraphML" in str(exc)
            outcomes.append("refused")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak <= budget, (budget, outcomes[-1], peak)
    assert outcomes[0] == "refused" and outcomes[-1] == "read", outcomes


def test_one_long_graphml_node_id_costs_its_own_length(tmp_path):
    # a fixed-width label array would pad all 2,001 ids to 20,000 characters (160 MB), and
    # checking them distinct sorted a copy of it
    import time
    import tracemalloc

    from apsp import shortest_path_between
    from apsp.io import read_graph

    pytest.importorskip("networkx")
    long_id = "x" * 20_000
    nodes = "".join(f'<node id="v{i}"/>' for i in range(2000)) + f'<node id="{long_id}"/>'
    path = tmp_path / "long.graphml"
    path.write_text('<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
                    f'<graph edgedefault="directed">{nodes}<edge source="v0" target="{long_id}"/>'
                    '</graph></graphml>')
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        e = read_graph(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert e.n == 2001 and e.labels[[e.dst[0]]].tolist() == [long_id]
    assert peak < 20 << 20, peak
    assert time.perf_counter() - t0 < 10
    assert shortest_path_between(e, "v0", long_id).length == 1  # the labels still name vertices
