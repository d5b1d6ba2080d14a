"""Outputs bigger than RAM: writers go a block of rows at a time, ``rows=`` / ``--rows I:J`` writes a part,
and the out-of-core result (a memory map) writes like any matrix; the new CLI options end to end."""
from __future__ import annotations

import gzip
import io

import numpy as np
import pytest
import scipy.io

from pathcheck import as_float
from randgraphs import random_edges

import apsp.io._formatter as common
import apsp.io.homework as homework
import apsp.io.npy as npy_module
from apsp import exactness, shortest_paths
from apsp.cli import main
from apsp.io import write_distances, write_graph
from apsp.io.homework import format_rows


def _distances(rng, n=23, dtype=np.int32):
    d = rng.integers(0, 1000, size=(n, n)).astype(dtype)
    d[rng.random((n, n)) < 0.2] = exactness.unreachable_value(dtype)
    return d


@pytest.mark.parametrize("chunk", [1, 7, 100, 1 << 20])
def test_text_writer_in_chunks_gives_the_same_bytes(tmp_path, rng, monkeypatch, chunk):
    d = _distances(rng)
    monkeypatch.setattr(homework, "CHUNK_BYTES", chunk)  # bytes per write: one row or less at 1 and 7
    p = tmp_path / "d.txt"
    write_distances(p, d)
    assert p.read_bytes() == format_rows(d)


@pytest.mark.parametrize("chunk", [1, 64, 1 << 20])
def test_npy_writer_in_chunks_through_a_memory_map(tmp_path, rng, monkeypatch, chunk):
    d = _distances(rng, 31, np.int16)
    monkeypatch.setattr(npy_module, "CHUNK_BYTES", chunk)
    src = np.lib.format.open_memmap(tmp_path / "src.npy", mode="w+", dtype=d.dtype, shape=d.shape)
    src[:] = d
    write_distances(tmp_path / "d.npy", src, keep_dtype=True)  # a memory map in, chunks out
    assert np.array_equal(np.load(tmp_path / "d.npy"), d)
    write_distances(tmp_path / "f.npy", src)  # the same chunks widened to float64, inf = no path
    assert np.array_equal(np.load(tmp_path / "f.npy"), np.where(d == np.iinfo(d.dtype).max, np.inf, d))


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz", ".npy", ".mtx"])
def test_rows_writes_a_block_of_rows(tmp_path, rng, suffix):
    d = _distances(rng)
    p = tmp_path / ("part" + suffix)
    write_distances(p, d, rows=(5, 12))
    if suffix.startswith(".txt"):
        data = p.read_bytes()
        assert (gzip.decompress(data) if suffix.endswith(".gz") else data) == format_rows(d[5:12])
    elif suffix == ".npy":
        part = d[5:12]
        assert np.array_equal(np.load(p), np.where(part == np.iinfo(part.dtype).max, np.inf, part))
    else:
        text = p.read_text()
        assert "% rows 6..12 of the 23 x 23 matrix" in text
        m = scipy.io.mmread(io.StringIO(text)).toarray()
        part = d[5:12]
        reach = part != exactness.unreachable_value(d.dtype)
        assert m.shape == (7, 23) and np.array_equal(m[reach], part[reach])
    for bad in ((0, 24), (5, 5), (-1, 3)):
        with pytest.raises(ValueError, match="rows="):
            write_distances(tmp_path / "x.txt", d, rows=bad)


def test_out_of_core_result_is_a_memory_map_that_writes_like_any_matrix(tmp_path, rng):
    g = random_edges(rng, 45, 0.1)
    r = shortest_paths(g, method="fw", backend="cpu", out_of_core=True, host_memory="1MB", block_size=8,
                       ooc_rows=10, scratch_dir=str(tmp_path))
    want = shortest_paths(g, method="reference", backend="cpu", dtype=r.dtype).distances
    write_distances(tmp_path / "a.txt", r.distances)
    write_distances(tmp_path / "a.npy", r.distances)
    assert (tmp_path / "a.txt").read_bytes() == format_rows(want)
    assert np.array_equal(np.load(tmp_path / "a.npy"), as_float(want))  # .npy: float64, inf for no path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "a.txt"]  # no scratch file left


# ----------------------------------------------------------------------------- CLI
@pytest.fixture
def graph_file(tmp_path, rng):
    p = tmp_path / "g.txt"
    write_graph(p, random_edges(rng, 40, 0.1, lo=1, hi=30))
    return p


def _reference(path):
    return shortest_paths(str(path), method="reference", backend="cpu").distances


def test_cli_rows_and_out_of_core(tmp_path, graph_file, capsys):
    out = tmp_path / "part.txt"
    code = main(["solve", str(graph_file), "-o", str(out), "--backend", "cpu", "--method", "fw",
                 "--out-of-core", "--host-memory", "64KB", "--scratch-dir", str(tmp_path), "--rows", "10:", "--json"])
    assert code == 0
    assert out.read_bytes() == format_rows(_reference(graph_file)[10:])
    report = capsys.readouterr().out
    assert '"out_of_core": true' in report and '"matrix_on_disk": true' in report
    # the homework form takes the same options after IN OUT [BLOCK]
    out2 = tmp_path / "first.txt"
    assert main([str(graph_file), str(out2), "8", "--rows", ":3", "--backend", "cpu"]) == 0
    assert out2.read_bytes() == format_rows(_reference(graph_file)[:3])


@pytest.mark.parametrize("rows,words", [("5", "takes I:J"), ("a:b", "takes I:J"), ("30:20", "0 <= I < J"),
                                        ("0:41", "0 <= I < J <= n = 40")])
def test_cli_bad_rows_fail_before_solving(tmp_path, graph_file, capsys, rows, words):
    out = tmp_path / "o.txt"
    assert main(["solve", str(graph_file), "-o", str(out), "--rows", rows, "--backend", "cpu"]) == 1
    assert words in capsys.readouterr().err and not out.exists()


def test_cli_memory_refusal_and_checkpoint_options(tmp_path, graph_file, capsys):
    out = tmp_path / "o.txt"
    assert main(["solve", str(graph_file), "-o", str(out), "--backend", "cpu", "--method", "fw",
                 "--host-memory", "7700"]) == 1  # the file, its parse and the graph fit, the solve does not
    err = capsys.readouterr().err
    assert "apsp: error: the fw solver on the cpu needs" in err and "--out-of-core" in err
    assert main(["solve", str(graph_file), "-o", str(out), "--resume"]) == 1
    assert "--resume needs --checkpoint FILE" in capsys.readouterr().err
    ck = tmp_path / "run.ckpt"
    assert main(["solve", str(graph_file), "-o", str(out), "--backend", "cpu", "--method", "fw",
                 "--checkpoint", str(ck), "--checkpoint-every", "0", "--block-size", "8", "--json"]) == 0
    assert out.read_bytes() == format_rows(_reference(graph_file)) and not ck.exists()
    assert '"checkpoints_saved": 4' in capsys.readouterr().out  # rounds 1-4 of 5 (the last needs none)
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())


def test_write_edges_chunking_unchanged(tmp_path, rng, monkeypatch):
    """Graph writers were already chunked; a tiny chunk gives the same file."""
    e = random_edges(rng, 30, 0.2)
    write_graph(tmp_path / "a.txt", e)
    monkeypatch.setattr(common, "CHUNK_BYTES", 50)
    write_graph(tmp_path / "b.txt", e)
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
