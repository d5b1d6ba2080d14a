"""``apsp solve ... --paths FILE``: the next-hop matrix beside the distances."""
import numpy as np

from apsp.cli import main
from apsp.paths import reconstruct_path

SAMPLE = "4 6\n1 2 55\n1 4 60\n2 3 66\n2 4 5\n3 2 1\n3 4 6\n"
EDGES = {(0, 1): 55, (0, 3): 60, (1, 2): 66, (1, 3): 5, (2, 1): 1, (2, 3): 6}


def test_solve_writes_paths_that_follow_edges_and_sum_to_the_distance(tmp_path):
    src = tmp_path / "g.txt"
    src.write_text(SAMPLE)
    assert main(["solve", str(src), "-o", str(tmp_path / "d.npy"), "--paths", str(tmp_path / "p.npy"),
                 "--backend", "cpu", "-q"]) == 0
    dist, succ = np.load(tmp_path / "d.npy"), np.load(tmp_path / "p.npy")
    assert dist.dtype == np.float64  # .npy distances: float64, inf where there is no path
    unreachable = np.inf
    for i in range(4):
        for j in range(4):
            if i == j or dist[i, j] == unreachable:
                assert succ[i, j] == -9999
                continue
            route = reconstruct_path(succ, i, j, kind="successors")
            assert route[0] == i and route[-1] == j
            assert sum(EDGES[e] for e in zip(route, route[1:])) == dist[i, j]


def test_paths_file_must_be_npy(tmp_path):
    src = tmp_path / "g.txt"
    src.write_text(SAMPLE)
    assert main(["solve", str(src), "-o", str(tmp_path / "d.txt"), "--paths", str(tmp_path / "p.txt")]) != 0
    assert not (tmp_path / "d.txt").exists()
