"""How the command line reads its forms: ``apsp path``'s own options and its all-pairs route, and
the homework form ``apsp IN OUT [BLOCK] [options]`` read as ``solve`` without rewriting the words."""
from __future__ import annotations

import argparse
import json

import pytest

import apsp.api
import apsp.cli.solve as solve_command
from apsp.cli import main
from apsp.cli.parser import build_parser


@pytest.fixture
def graph(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("4 4\n1 2 3\n2 3 4\n3 4 5\n1 4 20\n")
    return path


def commands() -> dict:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def options(parser) -> set:
    return {o for a in parser._actions for o in a.option_strings}


def refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


SOLVE_ONLY = sorted(options(commands()["solve"]) - options(commands()["path"]))


@pytest.mark.parametrize("option", SOLVE_ONLY)
def test_path_refuses_every_solve_only_option_naming_itself(graph, capsys, option):
    action = next(a for a in commands()["solve"]._actions if option in a.option_strings)
    value = [] if action.nargs == 0 else ["1"]
    err = refused(["path", str(graph), "--from", "1", "--to", "4", option, *value], capsys)
    assert "apsp path: error: unrecognized arguments: " + " ".join([option, *value]) in err, err
    assert err.startswith("usage: apsp path ")


def test_path_refuses_the_options_its_one_search_ignores(graph, capsys):
    base = ["path", str(graph), "--from", "1", "--to", "4"]
    err = refused([*base, "--backend", "gpu"], capsys)
    assert "apsp path: error: --backend gpu needs an all-pairs --method" in err
    for method in ("auto", "dijkstra", "johnson"):
        err = refused([*base, "--method", method, "--block-size", "4"], capsys)
        assert f"apsp path: error: --block-size is the blocking factor of --method fw or nd-fw; --method {method}" in err
    # what the route does use stays accepted
    assert main([*base, "--backend", "cpu", "-q"]) == 0
    assert main([*base, "--method", "fw", "--backend", "cpu", "--block-size", "2", "-q"]) == 0
    assert capsys.readouterr().out.splitlines() == ["1 -> 2 -> 3 -> 4", "length 12"] * 2


def test_path_all_pairs_method_asks_shortest_paths_for_next_hops_itself(graph, monkeypatch, capsys):
    calls = []
    solve = apsp.api.shortest_paths

    def recorded(*args, **kwargs):
        calls.append(kwargs)
        return solve(*args, **kwargs)

    def no_solve_command(*args, **kwargs):
        raise AssertionError("path went through the solve command")

    monkeypatch.setattr(apsp.api, "shortest_paths", recorded)
    monkeypatch.setattr(solve_command, "_solve_file", no_solve_command)
    argv = ["path", str(graph), "--from", "1", "--to", "4", "--method", "fw", "--backend", "cpu",
            "--block-size", "2", "--json", "-q"]
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["path"] == [1, 2, 3, 4] and got["length"] == 12 and got["method"] == "fw"
    assert len(calls) == 1 and calls[0]["return_successors"] is True
    assert calls[0]["method"] == "fw" and calls[0]["backend"] == "cpu" and calls[0]["block_size"] == 2
    # a vertex that is not there is named before any solve
    assert main([*argv[:3], "9", *argv[4:]]) == 1
    assert "--from 9 is not a vertex" in capsys.readouterr().err and len(calls) == 1


HOMEWORK_FORMS = [([], []), (["2"], ["--block-size", "2"]),
                  (["3", "--backend", "cpu", "--json", "-q"], ["--block-size", "3", "--backend", "cpu", "--json", "-q"]),
                  (["2", "--block-size", "5", "-o", "OTHER"], ["--block-size", "2", "--block-size", "5", "-o", "OTHER"]),
                  (["--distributed", "--method", "fw"], ["--distributed", "--method", "fw"])]


@pytest.mark.parametrize("after,solve_words", HOMEWORK_FORMS)
def test_homework_form_is_solve_read_from_its_own_words(graph, tmp_path, monkeypatch, after, solve_words):
    out = str(tmp_path / "d.txt")
    expected = build_parser().parse_args(["solve", str(graph), "-o", out, *solve_words])
    parsed, seen = [], []
    parse = argparse.ArgumentParser.parse_known_args

    def recorded(self, args=None, namespace=None):
        seen.append(list(args))
        return parse(self, args, namespace)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", recorded)
    monkeypatch.setattr(solve_command, "cmd_solve", lambda args: parsed.append(args) or 0)
    assert main([str(graph), out, *after]) == 0
    assert vars(parsed[0]) == vars(expected)
    # one parse, of the options after IN OUT [BLOCK] (none without them: solve's defaults are a
    # table): no command line rewritten for a parser
    options = after[1:] if after[:1] and after[0].isdigit() else after
    assert seen == ([options] if options else [])


def test_homework_form_says_what_solve_says(graph, tmp_path, capsys):
    out = str(tmp_path / "d.txt")
    cases = [(["--backend", "tpu"], ["--backend", "tpu"]), (["--bogus"], ["--bogus"]),
             (["--json", "extra"], ["--json", "extra"]), (["--help"], ["--help"])]
    for after, solve_words in cases:
        with pytest.raises(SystemExit) as homework:
            main([str(graph), out, "2", *after])
        said = capsys.readouterr()
        with pytest.raises(SystemExit) as solve:
            main(["solve", str(graph), "-o", out, "--block-size", "2", *solve_words])
        expected = capsys.readouterr()
        assert homework.value.code == solve.value.code and said.out == expected.out, after
        if after == ["--help"]:
            assert said.out.startswith("usage: apsp solve ") and "input" in said.out
        elif after == ["--backend", "tpu"]:
            assert said.err == expected.err and "apsp solve: error: argument --backend" in said.err
        else:  # a word solve lacks is the apsp command line's, as it was for the homework form
            assert said.err == ("usage: apsp [-h] [--version] COMMAND ...\n"
                                f"apsp: error: unrecognized arguments: {after[-1]}\n")


def test_homework_block_beside_the_automatic_choice_is_reported_unused_without_a_blocked_method(graph, tmp_path,
                                                                                              capsys):
    # a sparse 3,000-vertex graph on the CPU: the automatic choice runs Dijkstra, which has no block
    import numpy as np

    rng = np.random.default_rng(43)
    n, m = 3000, 9000
    src = rng.integers(1, n + 1, m)
    dst = (src + rng.integers(1, n, m) - 1) % n + 1  # never a loop
    sp = tmp_path / "sp.txt"
    sp.write_text(f"{n} {m}\n" + "".join(f"{i} {j} {w}\n" for i, j, w in zip(src, dst, rng.integers(1, 100, m))))
    out = tmp_path / "out.txt"
    assert main([str(sp), str(out), "64", "--backend", "cpu", "--json", "-q"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["method"] == "dijkstra" and summary["block_size"] is None
    plan = summary["info"]["plan"]
    assert plan["block"] is None and plan["block_note"] == "block 64 not used: method dijkstra has no block"
    assert main([str(sp), str(out), "64", "--backend", "cpu", "-v", "-q"]) == 0
    assert "block 64 not used: method dijkstra has no block" in capsys.readouterr().err
    # a method with a block runs with the one asked for, and the plan says so
    assert main([str(graph), str(out), "2", "--method", "fw", "--json", "-q"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["block_size"] == 2 and summary["info"]["plan"]["block"] == 2
    assert summary["info"]["plan"]["block_note"] is None
