"""Distance files a user loads with numpy without reading apsp's docs: 'no path' is inf, and a file
that must keep integers says so loudly."""
from __future__ import annotations

import numpy as np
import pytest

import apsp
from apsp.io import npy


def test_npy_distances_load_as_float64_with_inf(tmp_path):
    from apsp.cli import main

    (tmp_path / "g.txt").write_text("3 2\n1 2 3\n2 3 4\n")
    assert main(["solve", str(tmp_path / "g.txt"), "-o", str(tmp_path / "d.npy"), "-q"]) == 0
    d = np.load(tmp_path / "d.npy")
    assert d.dtype == np.float64 and d[2, 0] == np.inf and d[0, 2] == 7
    assert (d + 1)[2, 0] == np.inf  # arithmetic on "no path" stays "no path"
    assert main([str(tmp_path / "g.txt"), str(tmp_path / "h.npy"), "2"]) == 0  # the homework form too
    assert np.load(tmp_path / "h.npy").dtype == np.float64


def test_keep_dtype_writes_the_solves_integers(tmp_path):
    from apsp.cli import main

    (tmp_path / "g.txt").write_text("3 2\n1 2 3\n2 3 4\n")
    assert main(["solve", str(tmp_path / "g.txt"), "-o", str(tmp_path / "d.npy"), "-q", "--keep-dtype"]) == 0
    d = np.load(tmp_path / "d.npy")
    assert d.dtype.kind == "i" and d[2, 0] == np.iinfo(d.dtype).max


def test_library_writer_converts_and_keeps_every_distance_exact(tmp_path):
    r = apsp.shortest_paths(apsp.random_graph(60, 0.05, seed=4, weights=(0, 10**6)), backend="cpu")
    apsp.write_distances(tmp_path / "d.npy", r.distances)
    d = np.load(tmp_path / "d.npy")
    np.testing.assert_array_equal(d, r.to_float())
    big = np.array([[0, 2**53 + 1], [np.iinfo(np.int64).max, 0]], dtype=np.int64)
    with pytest.warns(npy.UnsafeFileWarning, match="no path' is 9223372036854775807"):
        apsp.write_distances(tmp_path / "big.npy", big)
    assert np.load(tmp_path / "big.npy").dtype == np.int64  # float64 would round 2**53 + 1


def test_a_full_disk_keeps_integers_with_a_loud_warning(tmp_path, monkeypatch):
    from apsp import sizes

    monkeypatch.setattr(sizes, "disk_available", lambda directory: 10)
    with pytest.warns(npy.UnsafeFileWarning, match="the disk has"):
        apsp.write_distances(tmp_path / "d.npy", np.array([[0, 1], [32767, 0]], dtype=np.int16))
    assert np.load(tmp_path / "d.npy").dtype == np.int16
