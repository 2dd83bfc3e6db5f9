"""The house rules of the package's structure, read from the source with :mod:`ast` (no Spark, nothing imported).

* The joins are a layer beneath the InsideOut planner and executor: nothing in
  ``faq/joins`` imports ``faq.insideout`` (the planner hands its decisions
  down as values; it may import the joins, never the reverse).
* A private name (``_x``) stays in its module: none is imported from another
  module, except from a package's own internal module (``faq/io/_common.py``
  for ``faq/io``).  Kept for ``faq/joins``; for the whole of ``faq`` the count
  may only go down.
* No module in ``faq/joins`` is longer than :data:`MAX_JOIN_MODULE_LINES`.
* No module in ``faq`` is longer than :data:`MAX_MODULE_LINES`; the few that
  are today (:data:`LONG_MODULES`) may only shrink.
* Every ``_repr_html_`` goes through the one display helper,
  :func:`faq.display.to_html`: its body is ``return to_html(self)``.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path
from typing import Iterator, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
FAQ = ROOT / "faq"
JOINS = FAQ / "joins"

#: Cross-module imports of private names in the whole of ``faq``: 25 when the joins stopped lending
#: theirs (they had 6, now none); 16 once faq.recursive's checks and constants became public; 7 once
#: the semi-naive rounds spark_maintained shares with seminaive became public in faq/recursive/rounds.py
#: (faq.hypergraph 5, faq.cli 2); none since the hypergraph's cover solver and order check and the
#: session module's Connect client and log4j option became public.  A name another module needs is
#: public (or lives in its package's ``_internal`` module); this stays 0.
PRIVATE_IMPORTS_CEILING = 0

#: Longest module allowed in ``faq/joins``.
MAX_JOIN_MODULE_LINES = 700
#: Modules of ``faq/joins`` longer than that today, with their length: each may only shrink
#: (none since faq/joins/local.py, the in-process join, was split by idea).
LONG_JOIN_MODULES: dict[str, int] = {}

#: Longest module allowed anywhere in ``faq``: a newcomer reads a module as one idea.
MAX_MODULE_LINES = 700
#: Modules of ``faq`` longer than that when the rule came in, with their length then (``wc -l``):
#: each may only shrink (a module split below the limit or gone passes; then delete its line).  Never
#: raise a number or add a module: split it instead.
LONG_MODULES = {
}


class Imported(NamedTuple):
    """One name (or module) an import statement takes, and where."""

    path: str  # relative to the repository
    line: int
    module: str  # the absolute module imported from (or imported)
    name: str  # the name taken from it ("" for ``import module``)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name + ' from ' if self.name else 'import '}{self.module}"


def module_name(path: Path, root: Path = ROOT) -> str:
    """``faq/joins/kernel.py`` -> ``faq.joins.kernel``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path = ROOT) -> Iterator[Imported]:
    """Every import in ``path``, at any depth (inside functions, under ``TYPE_CHECKING``), resolved to
    absolute modules; ``importlib.import_module`` and ``__import__`` of a literal name count too."""
    here = module_name(path, root)
    package = here.split(".") if path.name == "__init__.py" else here.split(".")[:-1]
    where = str(path.relative_to(root))
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), where)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Imported(where, node.lineno, alias.name, "")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                yield Imported(where, node.lineno, module, alias.name)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                yield Imported(where, node.lineno, node.args[0].value, "")


def is_private(name: str) -> bool:
    """``_x`` is private; ``__x__`` (a dunder) and ``__all__`` are not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(path: Path, root: Path = ROOT) -> list[Imported]:
    """Private names ``path`` imports from another module, leaving out its package's own internal
    modules (a module named ``_x`` in the same package, such as ``faq.io._common`` for ``faq.io``)."""
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for imported in imports(path, root):
        if not imported.name or not is_private(imported.name) or imported.module == here:
            continue
        home, _, last = imported.module.rpartition(".")
        if last.startswith("_") and home == package:  # the package's own internal module
            continue
        found.append(imported)
    return found


def modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def listing(found: list) -> str:
    return "\n".join(f"  {f}" for f in found)


def test_the_joins_do_not_import_insideout():
    found = [i for p in modules(JOINS) for i in imports(p)
             if i.module == "faq.insideout" or i.module.startswith("faq.insideout.")
             or (i.module == "faq" and i.name == "insideout")]
    assert not found, "faq/joins must not import faq.insideout (pass the plan's decisions as values):\n" + listing(found)


def test_the_joins_lend_no_private_name():
    found = [i for p in modules(JOINS) for i in private_imports(p)]
    assert not found, ("private names imported across modules of faq/joins (make them public, documented, "
                       "or keep them in their module):\n" + listing(found))


def test_private_names_imported_across_faq_only_go_down():
    found = [i for p in modules(FAQ) for i in private_imports(p)]
    count = len(found)
    by_package = Counter(str(Path(i.path).parent).replace("/", ".") for i in found)
    assert count <= PRIVATE_IMPORTS_CEILING, (
        f"{count} private names imported across modules of faq, more than the ceiling {PRIVATE_IMPORTS_CEILING} "
        f"(it may only go down; by package: {', '.join(f'{k} {n}' for k, n in by_package.most_common())}):\n"
        + listing(found))


def test_no_long_module_in_the_joins():
    too_long = []
    for path in modules(JOINS):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > LONG_JOIN_MODULES.get(path.name, MAX_JOIN_MODULE_LINES):
            too_long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not too_long, (f"modules of faq/joins over {MAX_JOIN_MODULE_LINES} lines (or longer than they were):\n"
                          + listing(too_long))


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_long_module_in_faq():
    too_long = [f"{path.relative_to(ROOT)}: {lines} lines" for path in modules(FAQ)
                if (lines := line_count(path)) > LONG_MODULES.get(str(path.relative_to(ROOT)), MAX_MODULE_LINES)]
    assert not too_long, (f"modules of faq over {MAX_MODULE_LINES} lines (or longer than they were); split them "
                          "by idea:\n" + listing(too_long))


def test_every_html_repr_goes_through_the_display_helper():
    astray = []
    for path in modules(FAQ):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.FunctionDef) and node.name == "_repr_html_"):
                continue
            body = [s for s in node.body if not isinstance(s, (ast.Import, ast.ImportFrom))
                    and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]  # docstring
            if [ast.unparse(s) for s in body] != ["return to_html(self)"]:
                astray.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not astray, ("_repr_html_ methods that do not return faq.display.to_html(self) (add the class to "
                        "faq.display.RENDERERS instead):\n" + listing(astray))


def test_the_checks_see_what_they_look_for(tmp_path):
    """The scanner finds imports inside functions and under TYPE_CHECKING, relative ones, and
    ``import_module``; it lets a package's internal module and dunders through."""
    package = tmp_path / "faq" / "joins"
    package.mkdir(parents=True)
    source = package / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from faq.io._common import _helper\n"       # another package's internal module: private
        "from ._inner import _fine\n"                # this package's internal module: allowed
        "from .kernel import __all__, _Kernel\n"     # a dunder passes; _Kernel does not
        "if TYPE_CHECKING:\n"
        "    from faq.insideout.physical import Strategy\n"
        "def f():\n"
        "    from .. import insideout\n"
        "    import importlib\n"
        "    return importlib.import_module('faq.insideout.planner')\n",
        encoding="utf-8",
    )
    assert [(i.module, i.name) for i in private_imports(source, tmp_path)] == [
        ("faq.io._common", "_helper"), ("faq.joins.kernel", "_Kernel")]
    upward = [i for i in imports(source, tmp_path) if i.module.startswith("faq.insideout") or i.name == "insideout"]
    assert [(i.line, i.module, i.name) for i in upward] == [
        (6, "faq.insideout.physical", "Strategy"), (8, "faq", "insideout"), (10, "faq.insideout.planner", "")]


def test_the_design_notes_the_code_cites_are_in_the_repository():
    """Code cites design notes as docs/design.md, "Section"; each section is a heading there (no file outside)."""
    import re

    headings = {line[3:].strip() for line in (ROOT / "docs" / "design.md").read_text().splitlines()
                if line.startswith("## ")}
    cited, outside = set(), []
    for path in modules(FAQ):
        text = path.read_text()
        if "DESIGN.md" in text:
            outside.append(str(path.relative_to(ROOT)))
        cited |= set(re.findall(r'docs/design\.md,\s+"([^"]+)"', text))
    assert not outside, f"cite docs/design.md, not a design file outside the repository: {outside}"
    assert cited and cited <= headings, f"cited sections missing from docs/design.md: {sorted(cited - headings)}"


def test_dir_of_the_package_shows_what_a_user_may_use_and_the_annotations_ship():
    import faq

    names = set(dir(faq))
    assert set(faq.__all__) <= names
    assert not {"annotations", "lazy_exports", "importlib"} & names and not any(n.startswith("_") and
                                                                              not n.startswith("__") for n in names)
    assert (FAQ / "py.typed").exists()  # PEP 561: type checkers read faq's annotations


def _settings_reads(path: Path) -> Iterator[str]:
    """Where ``path`` reads a session setting itself (``….conf.get(...)``) or names a ``spark.faq.*`` key."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "conf"):
            yield f"{path.relative_to(ROOT)}:{node.lineno}: conf.get"
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and re.fullmatch(r"spark\.faq\.\w+", str(node.value.value))):
            yield f"{path.relative_to(ROOT)}:{node.lineno}: defines {node.value.value}"


def test_settings_are_read_in_one_module():
    """Every ``spark.faq.*`` key is defined in faq/settings.py and every session setting read there
    (issue 49); faq/spark.py, the session's one owner, reads Spark's own (parallelism, its constraints)."""
    allowed = {FAQ / "settings.py", FAQ / "spark.py"}
    found = [hit for path in sorted(FAQ.rglob("*.py")) if path not in allowed for hit in _settings_reads(path)]
    assert not found, found
    assert list(_settings_reads(FAQ / "settings.py")), "the check sees nothing: it must find settings.py's own reads"


def test_loops_are_compiled_one_way():
    """Every numba kernel goes through faq/compiled.py (issue 49: one compilation helper, one set of
    options -- on-disk cache, GIL released); nothing else calls numba's compiler."""
    found = []
    for path in sorted(FAQ.rglob("*.py")):
        if path == FAQ / "compiled.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("njit", "jit") or (
                    isinstance(node, ast.alias) and node.name in ("njit", "jit")):
                found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}")
    assert not found, found
    assert "njit" in (FAQ / "compiled.py").read_text(encoding="utf-8")
