"""The automatic choice's reasons (``-v``, ``Result.info["why"]``) are true on every family of the
benchmark suite's graphs (`benchmarks/real_graphs.py`, here at small sizes), and the check that
says so catches false ones."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import apsp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import real_graphs as rg  # noqa: E402

GRAPHS = {
    "roget": lambda: rg.bundled("roget"),
    "knuth-miles": lambda: rg.bundled("knuth-miles"),
    "les_miserables": lambda: rg.social("les_miserables"),
    "road": lambda: rg.road(400),
    "mesh": lambda: rg.mesh(400),
    "grid": lambda: rg.grid(20),
    "knn": lambda: rg.knn(400),
    "knn-neg": lambda: rg.knn(300, potentials=True),
    "random": lambda: rg.random_graph(400, 2000),
    "random-unit": lambda: rg.random_graph(400, 2000, unit=True),
    "rmat": lambda: rg.rmat(8),
    "rmat-unit": lambda: rg.rmat(8, unit=True),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_the_automatic_choice_says_only_what_is_true(name):
    g = apsp.as_graph(GRAPHS[name]())
    res = apsp.shortest_paths(g, backend="cpu", progress=False)
    assert rg.false_reasons(g, res) == [], res.info["why"]


def test_false_reasons_are_caught():
    g = apsp.as_graph(rg.road(300))
    res = apsp.shortest_paths(g, backend="cpu", progress=False)
    why, est = res.info["why"], res.info["plan"]["estimates"]
    assert res.method == "fw" and "verified" in why and len(est) >= 3
    first, second, third = sorted(est, key=est.get)

    def claims(text):
        res.info["why"] = text
        return rg.false_reasons(g, res)

    # the second-smallest estimate named as the next one, then a third one
    assert claims(why.replace(f"next {second} {est[second]:.3g} s", f"next {third} {est[third]:.3g} s"))
    # the pick's estimate misquoted
    assert claims(why.replace(f"time, {est[first]:.3g} s", f"time, {est[first] * 2:.3g} s"))
    # another backend
    assert claims(why.replace("backend cpu (", "backend gpu ("))
    # a bound that is not the graph's
    assert claims(why + "; dtype int32, the smallest that holds every possible distance: bound (n-1)*max|w| = 100")
    # a found distance longer than every distance of the result
    assert claims(why + "; not tried: int16: a shortest distance of 99999999 was found")
    # 'verified' with a distance in the cut-off band
    res.distances[0, 1] = apsp.unreachable_value(res.dtype) // 2 - 1
    assert claims(why)
