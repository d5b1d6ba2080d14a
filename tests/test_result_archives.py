"""Result files (``.npz``): written to streams and devices, and crafted ones refused clearly."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import apsp
from apsp.errors import GraphFormatError
from apsp.graph import EdgeList


def small_result():
    return apsp.shortest_paths(EdgeList(3, [0, 1], [1, 2], [4, 5], labels=[10, 20, 30]))


def test_result_save_to_dev_null_works():
    small_result().save("/dev/null")


def test_result_saved_to_a_stream_loads_back(tmp_path):
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = {}
    reader = threading.Thread(target=lambda: got.setdefault("bytes", fifo.read_bytes()))
    reader.start()
    small_result().save(fifo)
    reader.join()
    out = tmp_path / "back.npz"
    out.write_bytes(got["bytes"])
    back = apsp.load_result(out)
    assert back.distances.tolist() == small_result().distances.tolist()
    assert back.labels.tolist() == [10, 20, 30]


def test_cli_npz_output_to_dev_null_and_stdout(tmp_path):
    src = tmp_path / "g.snap"
    src.write_text("5 77\n77 555\n")
    for target in ("/dev/null", "-"):
        run = subprocess.run([sys.executable, "-m", "apsp", "solve", str(src), "-o", target, "--out-format",
                              "npz"], capture_output=True)
        assert run.returncode == 0, run.stderr
    (tmp_path / "s.npz").write_bytes(run.stdout)
    assert apsp.load_result(tmp_path / "s.npz").labels.tolist() == [5, 77, 555]


# -- crafted files ------------------------------------------------------------------------------

def npy_bytes(array) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asanyarray(array), allow_pickle=False)
    return buf.getvalue()


def craft(tmp_path, members: dict, name="crafted.npz"):
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for member, data in members.items():
            z.writestr(f"{member}.npy", data if isinstance(data, bytes) else npy_bytes(data))
    return path


def meta(**extra):
    return np.array(json.dumps({"format": "apsp-result", "version": 1, "method": "fw", "backend": "cpu",
                                **extra}))


def test_load_result_refuses_a_header_claiming_more_than_the_file_holds(tmp_path):
    # a header claiming 10^12 entries over two bytes of data
    fake = np.lib.format.magic(1, 0)
    hdr = "{'descr': '<i2', 'fortran_order': False, 'shape': (1000000, 1000000), }"
    hdr = hdr + " " * (63 - (len(fake) + 2 + len(hdr)) % 64) + "\n"
    huge = fake + len(hdr).to_bytes(2, "little") + hdr.encode() + b"\0\0"
    path = craft(tmp_path, {"apsp": meta(), "distances": huge})
    with pytest.raises(GraphFormatError, match="claims shape"):
        apsp.load_result(path)


def test_load_result_refuses_deeply_nested_description(tmp_path):
    deep = np.array("[" * 100000 + "]" * 100000)
    path = craft(tmp_path, {"apsp": deep, "distances": np.zeros((2, 2), dtype=np.int16)})
    with pytest.raises(GraphFormatError, match="nests too deeply"):
        apsp.load_result(path)


@pytest.mark.parametrize("members, problem", [
    ({"distances": np.zeros((2, 3), dtype=np.int16)}, "not square"),
    ({"distances": np.zeros((2, 3), dtype=np.int16), "sources": np.array([0, 1, 2])}, "sources must be"),
    ({"distances": np.zeros((2, 3), dtype=np.int16), "sources": np.array([0, 7])}, "sources must be"),
    ({"distances": np.zeros((3, 3), dtype=np.int16), "labels": np.array([1, 2])}, "labels"),
    ({"distances": np.zeros((3, 3), dtype=np.int16), "labels": np.array([1, 1, 2])}, "distinct"),
    ({"distances": np.zeros((3, 3), dtype=np.complex64)}, "dtype"),
    ({"distances": np.zeros((3, 3), dtype=np.int16), "predecessors": np.zeros((3, 3), dtype=np.float32)},
     "predecessors"),
    ({"distances": np.zeros((3, 3), dtype=np.int16), "predecessors": np.full((3, 3), 9, dtype=np.int32)},
     "predecessors"),
])
def test_load_result_refuses_members_that_disagree(tmp_path, members, problem):
    path = craft(tmp_path, {"apsp": meta(), **members})
    with pytest.raises(GraphFormatError, match=problem):
        apsp.load_result(path)
