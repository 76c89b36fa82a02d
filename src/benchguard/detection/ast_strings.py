"""Strings a Python module builds from its own literals, read by :mod:`ast`.

A cheating deliverable spells the names a rule looks for in pieces (red team 29:
``getattr(kls, "from_item_" + "and_call")``, ``{"__" + "eq" + "__": f}``,
``sys.modules.get("_py" + "test.re" + "ports")``) so that no literal names them. This
module folds such expressions back to the string they make: concatenation (``+``, an
f-string of literals, ``"".join`` of literals, ``%`` and ``str.format`` left alone),
and names bound to such strings (any binding of a name in the module, every one of
which folds: a name rebound to something else is not folded).

Pure and bounded: the folding depth is capped, and an expression it cannot fold is
None (never a guess).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

__all__ = ["StringNames", "fold", "string_names"]

# Nesting folded at most (a deeper expression is not folded).
MAX_DEPTH = 32
# Characters a folded string holds at most (longer is not a name a rule asks about).
MAX_CHARS = 4096
# Rounds of folding names built from names.
ROUNDS = 4

StringNames = Mapping[str, str]


def string_names(tree: ast.AST) -> dict[str, str]:
    """Names the module binds only to foldable strings (every binding of the name, in
    any scope, folding to the same string), by name; a name built from another folds
    too (a few rounds)."""
    bindings: dict[str, list[ast.expr | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bindings.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bindings.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign | ast.For | ast.NamedExpr) and isinstance(
            node.target, ast.Name
        ):
            bindings.setdefault(node.target.id, []).append(None)  # unknown
    known: dict[str, str] = {}
    for _ in range(ROUNDS):
        found: dict[str, str] = {}
        for name, values in bindings.items():
            texts = {fold(v, known) if v is not None else None for v in values}
            text = next(iter(texts))
            if len(texts) == 1 and text is not None:
                found[name] = text
        if found == known:
            break
        known = found
    return known


def fold(node: ast.AST, names: StringNames | None = None, depth: int = 0) -> str | None:
    """The string ``node`` evaluates to when it is built only from string literals
    (and names in ``names``); None otherwise."""
    if depth > MAX_DEPTH:
        return None
    names = names or {}
    text: str | None = None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.Name):
        text = names.get(node.id)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = fold(node.left, names, depth + 1), fold(node.right, names, depth + 1)
        text = left + right if left is not None and right is not None else None
    elif isinstance(node, ast.JoinedStr):
        parts = [_fstring_part(v, names, depth + 1) for v in node.values]
        text = "".join(p for p in parts if p is not None) if None not in parts else None
    elif isinstance(node, ast.Call):
        text = _join(node, names, depth + 1)
    if text is not None and len(text) > MAX_CHARS:
        return None
    return text


def _fstring_part(node: ast.AST, names: StringNames, depth: int) -> str | None:
    if isinstance(node, ast.FormattedValue):
        if node.conversion != -1 or node.format_spec is not None:
            return None
        return fold(node.value, names, depth)
    return fold(node, names, depth)


def _join(node: ast.Call, names: StringNames, depth: int) -> str | None:
    """``"sep".join([...literals])``."""
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "join"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        return None
    separator = fold(func.value, names, depth)
    parts = [fold(e, names, depth) for e in node.args[0].elts]
    if separator is None or None in parts:
        return None
    return separator.join(p for p in parts if p is not None)
