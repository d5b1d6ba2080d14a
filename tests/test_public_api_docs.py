"""Every public name of ``apsp`` is documented in numpydoc sections, and type checkers see real types."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import apsp

ROOT = Path(__file__).resolve().parents[1]

#: classes whose constructors and public methods are documented parameter by parameter
DATA_CLASSES = ("Result", "Graph", "EdgeList")


def _sections(doc: str) -> dict[str, str]:
    """numpydoc sections of a docstring: title -> body."""
    doc = inspect.cleandoc(doc)
    found = {}
    parts = re.split(r"^(\w[\w ]*)\n-{3,}\n", doc, flags=re.M)
    for title, body in zip(parts[1::2], parts[2::2]):
        found[title.strip()] = body
    return found


def _documented_names(section: str) -> set[str]:
    """Names a Parameters/Attributes section describes (``a, b : int`` documents both)."""
    names = set()
    for line in section.splitlines():
        if line and not line[0].isspace():
            head = line.split(" : ")[0]
            names.update(name.strip().lstrip("*") for name in head.split(","))
    return names


def _parameters(fn) -> list[str]:
    sig = inspect.signature(fn)
    return [name for name, p in sig.parameters.items() if name not in ("self", "cls")]


def _check_function(label: str, fn) -> list[str]:
    problems = []
    doc = inspect.getdoc(fn)
    if not doc:
        return [f"{label}: no docstring"]
    sections = _sections(doc)
    params = _parameters(fn)
    if params:
        if "Parameters" not in sections:
            problems.append(f"{label}: no Parameters section")
        else:
            missing = set(params) - _documented_names(sections["Parameters"])
            if missing:
                problems.append(f"{label}: Parameters does not document {sorted(missing)}")
    returns = inspect.signature(fn).return_annotation
    # a method without parameters says what it returns in its summary line
    if params and returns not in (None, "None", inspect.Signature.empty) and "Returns" not in sections:
        problems.append(f"{label}: no Returns section")
    return problems


def _public_functions():
    for name in apsp.__all__:
        obj = getattr(apsp, name)
        if inspect.isfunction(obj):
            yield name, obj
    for cls_name in DATA_CLASSES:
        cls = getattr(apsp, cls_name)
        for name, member in vars(cls).items():
            if name.startswith("_"):
                continue
            if isinstance(member, (classmethod, staticmethod)):
                member = member.__func__
            if inspect.isfunction(member):
                yield f"{cls_name}.{name}", member


def test_every_public_function_documents_its_parameters_and_returns():
    problems = [p for label, fn in _public_functions() for p in _check_function(label, fn)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(n for n in apsp.__all__ if inspect.isclass(getattr(apsp, n))))
def test_every_public_class_and_member_has_a_docstring(name):
    cls = getattr(apsp, name)
    assert inspect.getdoc(cls), name
    for member_name, member in vars(cls).items():
        if member_name.startswith("_") or not callable(getattr(member, "__get__", None)):
            continue
        if isinstance(member, (property, classmethod, staticmethod)) or inspect.isfunction(member):
            target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
            assert inspect.getdoc(target), f"{name}.{member_name} has no docstring"


@pytest.mark.parametrize("name", DATA_CLASSES)
def test_data_classes_document_every_field_and_property(name):
    cls = getattr(apsp, name)
    sections = _sections(inspect.getdoc(cls))
    assert "Attributes" in sections, f"{name} has no Attributes section"
    documented = _documented_names(sections["Attributes"])
    fields = {f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")}
    properties = {k for k, v in vars(cls).items() if isinstance(v, property) and not k.startswith("_")}
    if name != "Graph":  # Graph's many weight facts are documented on each property
        fields |= properties
    assert fields <= documented, f"{name}: Attributes misses {sorted(fields - documented)}"


def test_shortest_paths_documents_what_it_raises():
    sections = _sections(inspect.getdoc(apsp.shortest_paths))
    raised = _documented_names(sections.get("Raises", ""))
    assert {"NegativeCycleError", "DtypeError", "BackendUnavailableError", "MemoryPlanError",
            "ValueError"} <= raised


def _stub_imports(package) -> dict[str, str]:
    """The public names a package's ``__init__.pyi`` imports, each with its module; every import must be an
    explicit re-export (``from .x import y as y``: ``mypy --strict`` refuses implicit ones)."""
    stub = Path(package.__file__).with_suffix(".pyi")
    names = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            assert isinstance(node, ast.ImportFrom) and node.level == 1 and node.module, ast.unparse(node)
            for alias in node.names:
                assert alias.asname == alias.name, f"{ast.unparse(node)}: not 'X as X' in {stub.name}"
                names[alias.name] = f"{package.__name__}.{node.module}"
    return names


@pytest.mark.parametrize("package", ["apsp", "apsp.distributed"])
def test_package_is_marked_typed_and_exports_real_types(package):
    """The stub beside ``__init__.py`` is the one list of public names: type checkers read it, and the
    package's ``__all__``, ``dir()`` and lazy attributes come from it."""
    if package == "apsp.distributed":
        pytest.importorskip("mpi4py", reason="apsp.distributed's names resolve through mpi4py (the mpi extra)")
    module = importlib.import_module(package)
    assert (Path(apsp.__file__).parent / "py.typed").is_file()
    exports = _stub_imports(module)
    assert sorted(module.__all__) == sorted(exports)
    assert sorted(dir(module)) == sorted(exports)
    for name, defined_in in exports.items():
        assert getattr(module, name) is getattr(importlib.import_module(defined_in), name), name
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(module, "no_such_name")


def test_submodules_resolve_as_attributes():
    probe = "import apsp; print(apsp.exactness.__name__)"  # not imported by anything before
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "apsp.exactness"


def test_import_apsp_still_loads_numpy_only():
    code = "import sys, apsp; print(sorted(m for m in ('scipy', 'numba', 'apsp.api') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_mypy_sees_real_types(tmp_path):
    """mypy reads ``apsp.shortest_paths(...).distances`` as an ndarray, not Any."""
    api = pytest.importorskip("mypy.api")
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        import apsp
        reveal_type(apsp.shortest_paths([(0, 1, 2)]).distances)
        reveal_type(apsp.floyd_warshall([[0, 1], [1, 0]]))
        reveal_type(apsp.floyd_warshall([[0, 1], [1, 0]], return_predecessors=True))
        reveal_type(apsp.Graph.from_edges)
    """))
    stdout, stderr, status = api.run([str(probe), "--follow-imports=silent", "--no-incremental",
                                      "--ignore-missing-imports", "--python-executable", sys.executable])
    revealed = re.findall(r'Revealed type is "(.*)"', stdout)
    assert len(revealed) == 4, stdout + stderr
    assert revealed[0].startswith("numpy.ndarray"), revealed[0]
    assert revealed[1].startswith("numpy.ndarray"), revealed[1]
    assert revealed[2].startswith("tuple[numpy.ndarray"), revealed[2]
    assert "apsp.graph.EdgeList" in revealed[3] and revealed[3].endswith("apsp.graph.Graph"), revealed[3]
