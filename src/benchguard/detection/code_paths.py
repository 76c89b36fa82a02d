"""Home paths that interpreter code builds from pieces, read as ``~/...`` paths.

A shell word ``~/benchguard/tasks`` is read by :mod:`~benchguard.detection.shell`; the
same path in code is usually assembled: ``os.path.join(os.path.expanduser("~"),
"benchguard", "tasks")``, ``Path.home() / "benchguard" / "tasks"``,
``path.join(os.homedir(), 'benchguard')`` (node), ``"$ENV{HOME}/benchguard"`` (perl),
``File.join(Dir.home, "benchguard")`` (ruby), or a ``'~/b*/tasks'`` string handed to
``expanduser`` or a glob. This module finds a home expression and the string
literals joined to it right after (by ``,``, ``/``, ``+``, ``.`` or string
interpolation) and returns the path they spell, so the profile's path rules (and
:mod:`~benchguard.detection.glob_reach` for globs) judge it like a typed path.

What it cannot see: a piece held in a variable, computed (``chr``, ``join`` of a
list built elsewhere, a rot13), or read from a file: the sandbox and the system audit
cover those. Bounded: at most :data:`MAX_CODE_PATHS` paths per command, and only the
first :data:`MAX_CODE_CHARS` characters are read.
"""

from __future__ import annotations

import re

MAX_CODE_PATHS = 16
MAX_CODE_CHARS = 20_000
_MAX_PIECES = 8

# Expressions that evaluate to the home directory, in the usual interpreters.
_HOME_EXPR = re.compile(
    r"""os\.path\.expanduser\(\s*(?P<q1>['"])~/?(?P=q1)\s*\)"""
    r"""|(?:pathlib\.)?Path\.home\(\s*\)"""
    r"""|(?:pathlib\.)?Path\(\s*(?P<q2>['"])~/?(?P=q2)\s*\)\.expanduser\(\s*\)"""
    r"""|os\.environ(?:\.get\(\s*|\[\s*)(?P<q3>['"])HOME(?P=q3)\s*(?:\]|\)|,[^)]{0,40}\))"""
    r"""|os\.getenv\(\s*(?P<q4>['"])HOME(?P=q4)\s*(?:,[^)]{0,40})?\)"""
    r"""|(?:require\(\s*['"](?:node:)?os['"]\s*\)|\bos)\.homedir\(\s*\)"""
    r"""|process\.env(?:\.HOME\b|\[\s*(?P<q5>['"])HOME(?P=q5)\s*\])"""
    r"""|\$ENV\{\s*['"]?HOME['"]?\s*\}"""
    r"""|\bENV\[\s*(?P<q6>['"])HOME(?P=q6)\s*\]|\bENV\.fetch\(\s*['"]HOME['"]\s*\)|\bDir\.home\b"""
)
# What may sit between the home expression and the next piece.
_JOIN = re.compile(r"""\s*(?:\)\s*)?(?:,|/|\+|\.(?=\s*['"])|\\\\)?\s*""")
_LITERAL = re.compile(r"""(?P<q>['"])(?P<text>[^'"\\\n]{1,200})(?P=q)""")
# A join call whose first argument is the home: its other arguments are path pieces
# (a comma elsewhere, print(home, "done"), is not a join).
_JOIN_CALL = re.compile(r"""(?:\bjoin|\bresolve|catfile|catdir)\(\s*\Z""")
# A ``~/...`` string literal in code (expanduser's argument, a glob's pattern).
_TILDE_LITERAL = re.compile(r"""(?<=['"])~/[^'"\s\\`]{1,300}(?=['"])""")
# A perl or shell-style interpolation of the home inside one string: "$ENV{HOME}/x".
_INTERPOLATED = re.compile(r"""\$ENV\{\s*['"]?HOME['"]?\s*\}(?P<rest>/[^'"\s\\;)`]{1,300})""")


def code_paths(text: str) -> list[str]:
    """``~/...`` paths the code in ``text`` builds from a home expression and the
    string literals joined to it, and ``~/...`` literals it names."""
    code = text[:MAX_CODE_CHARS]
    found: list[str] = []

    def add(path: str) -> None:
        path = re.sub(r"/{2,}", "/", path).rstrip("/")
        if path and path != "~" and path not in found:
            found.append(path)

    for match in _HOME_EXPR.finditer(code):
        in_join = _JOIN_CALL.search(code, max(0, match.start() - 40), match.start()) is not None
        pieces = _pieces_after(code, match.end(), in_join=in_join)
        if pieces:
            add("~/" + "/".join(piece.strip("/") for piece in pieces))
        if len(found) >= MAX_CODE_PATHS:
            return found
    for match in _INTERPOLATED.finditer(code):
        add("~" + match.group("rest"))
    for match in _TILDE_LITERAL.finditer(code):
        add(match.group(0))
    return found[:MAX_CODE_PATHS]


def _pieces_after(code: str, at: int, *, in_join: bool) -> list[str]:
    """String literals joined to the expression ending at ``at``: each after a join
    (``,`` of a join call's arguments, ``/``, ``+``, perl's ``.``); two things side by
    side with nothing joining them are not one path."""
    pieces: list[str] = []
    position = at
    for _ in range(_MAX_PIECES):
        gap = _JOIN.match(code, position)
        joins = "/+.," if in_join else "/+."
        if gap is None or not any(ch in gap.group(0) for ch in joins):
            break
        literal = _LITERAL.match(code, gap.end())
        if literal is None:
            break
        text = literal.group("text")
        if " " in text or not text.strip("/"):
            break
        pieces.append(text)
        position = literal.end()
    return pieces
