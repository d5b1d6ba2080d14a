"""The documentation site: its API reference names every public name, its benchmark figures are the ones
BENCHMARKS.md records, and it builds with warnings as errors."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import apsp

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _load_docs_figures():
    spec = importlib.util.spec_from_file_location("docs_figures", ROOT / "benchmarks" / "docs_figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_api_reference_documents_every_public_name():
    reference = (DOCS / "reference.md").read_text()
    rendered = set(re.findall(r"^::: apsp\.(\w+)\s*$", reference, re.M))
    missing = [name for name in apsp.__all__ if name != "__version__" and name not in rendered]
    assert not missing, f"docs/reference.md has no '::: apsp.NAME' for {missing}"
    assert rendered <= set(apsp.__all__), f"docs/reference.md renders non-public {sorted(rendered - set(apsp.__all__))}"
    assert "apsp.__version__" in reference


def test_changelog_has_a_section_for_this_version():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## {re.escape(apsp.__version__)}\s*$", changelog, re.M), \
        f"CHANGELOG.md has no '## {apsp.__version__}' section"


def test_pip_show_says_where_to_read_more():
    # no public address is settled, so the summary (pip show's "Summary") names what ships
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for where in ("README.md", "docs/", "CHANGELOG.md"):
        assert where in project["description"]
        assert (ROOT / where).exists()
    assert "docs" in project["optional-dependencies"]


def test_benchmark_page_figures_are_the_recorded_ones():
    """Every figure the benchmarks page plots is written in the BENCHMARKS.md section it cites, beside the
    date and commit it cites: the plots are drawn from the development log, never from numbers of their own."""
    figures = _load_docs_figures()
    log = (ROOT / "BENCHMARKS.md").read_text()
    for recorded in figures.RECORDED:
        start = log.index(recorded.section)
        end = log.find("\n## ", start + 1)
        section = log[start:end if end > 0 else len(log)]
        for word in re.findall(r"\b(?:20\d\d-\d\d-\d\d|[0-9a-f]{7,})\b", recorded.source):
            assert word in section, f"{recorded.section}: {word!r} is not in that section"
        for label, value in recorded.values.items():
            assert re.search(rf"(?<![\d.]){re.escape(value)}(?![\d])", section), \
                f"{recorded.section}: {label} = {value} is not in that section"


def test_benchmark_page_shows_every_plot_the_script_draws(tmp_path):
    pytest.importorskip("matplotlib", reason="the plot extra is missing: pip install '.[plot]'")
    drawn = {path.name for path in _load_docs_figures().draw(tmp_path)}
    page = (DOCS / "benchmarks.md").read_text()
    shown = set(re.findall(r"\(img/benchmarks/([\w.-]+\.png)\)", page))
    assert drawn == shown, f"drawn {sorted(drawn)}, shown {sorted(shown)}"
    assert {p.name for p in (DOCS / "img" / "benchmarks").glob("*.png")} == drawn


def test_docs_site_builds_with_warnings_as_errors(tmp_path):
    for module in ("mkdocs", "mkdocstrings_handlers.python", "pymdownx.snippets"):
        if importlib.util.find_spec(module.split(".")[0]) is None or importlib.util.find_spec(module) is None:
            pytest.skip(f"the docs extra is missing ({module}): pip install '.[docs]'")
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
                           cwd=ROOT, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    reference = (tmp_path / "reference" / "index.html").read_text()
    for name in apsp.__all__:
        if name != "__version__":
            assert f'id="apsp.{name}"' in reference, f"{name} did not render in the API reference"
