"""The library imports nothing from the CLI: only ``faq/cli/`` (and ``python -m faq``) may import ``faq.cli``.

Every ``faq/**/*.py`` is parsed with :mod:`ast` (no module is imported), so
imports inside functions count, and so do relative imports and
``importlib.import_module("faq.cli...")`` / ``__import__`` with a literal name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "faq"
CLI = "faq.cli"
# `python -m faq` runs the command: it is the CLI's second entry point, not a library module.
ALLOWED = {PACKAGE / "__main__.py"}


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """``faq/graphs/motifs.py`` -> ``faq.graphs.motifs`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_names(path: Path, package: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, dotted name) of everything ``path`` imports, at any depth; ``from a import b`` gives ``a.b``.

    ``package`` is the folder of the top-level package ``path`` lies in (relative imports resolve from it).
    """
    module = module_name(path, package)
    parent = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: one dot is this module's package, each further dot one level up
                anchor = parent.split(".")[: len(parent.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names.append((node.lineno, base))
            names += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Call) and _is_import_call(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.append((node.lineno, first.value))
    return names


def _is_import_call(func: ast.expr) -> bool:
    """``importlib.import_module(...)``, ``import_module(...)`` or ``__import__(...)``."""
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")


def is_cli(name: str) -> bool:
    return name == CLI or name.startswith(CLI + ".")


def library_files() -> list[Path]:
    cli_dir = PACKAGE / "cli"
    return sorted(p for p in PACKAGE.rglob("*.py") if cli_dir not in p.parents and p not in ALLOWED)


def test_the_cli_is_a_package():
    assert (PACKAGE / "cli" / "__init__.py").is_file()
    assert not (PACKAGE / "cli.py").exists()


def test_no_library_module_imports_the_cli():
    files = library_files()
    assert len(files) > 30, files  # the walk found the library
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
                 for path in files for line, name in imported_names(path) if is_cli(name)]
    assert offenders == []


@pytest.mark.parametrize("source, expected", [
    ("import faq.cli", True),
    ("from faq import cli", True),
    ("from faq.cli.output import print_json", True),
    ("def f():\n    from faq.cli import main\n", True),
    ("from .. import cli", True),  # seen from faq/graphs/x.py
    ("from ..cli import output", True),
    ("import importlib\nimportlib.import_module('faq.cli.output')", True),
    ("from faq import client", False),
    ("import faq.clique", False),
    ("from . import cli", False),  # faq.graphs.cli, not faq.cli
])
def test_the_check_sees_every_form_of_import(tmp_path, source, expected):
    """The checker itself: each form of importing faq.cli, from a module at faq/graphs/x.py."""
    fake = tmp_path / "faq"
    (fake / "graphs").mkdir(parents=True)
    path = fake / "graphs" / "x.py"
    path.write_text(source)
    assert any(is_cli(name) for _, name in imported_names(path, fake)) is expected
