"""The house rule on long functions: none in ``faq/`` over 80 lines of code without a reason.

A function's length is counted from its first statement after the docstring
to its last line.  A longer one must say why in its docstring, in a line
starting ``Long because`` (so the reason is read where the length is met).
Pure: reads the sources with ``ast``, no Spark.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "faq"
MAX_LINES = 80


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = node.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and len(body) > 1:
        body = body[1:]
    return node.end_lineno - body[0].lineno + 1


def long_functions(root: Path = PACKAGE, limit: int = MAX_LINES) -> list[str]:
    """``path:line name (n lines)`` of every function over ``limit`` code lines without a stated reason."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _code_lines(node) > limit:
                doc = ast.get_docstring(node) or ""
                if "Long because" not in doc:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({_code_lines(node)} lines)")
    return found


def test_no_long_function_without_a_reason():
    assert long_functions() == []


def test_the_rule_finds_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES + 1))
    (tmp_path / "m.py").write_text(f'def f():\n    """Doc."""\n{body}\n\ndef g():\n    """Long because: a table."""\n{body}\n')
    assert long_functions(tmp_path) == [f"{tmp_path.name}/m.py:1 f ({MAX_LINES + 1} lines)"]
