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

Pieces held in variables are folded too (detector version 12): ``home =
os.path.expanduser("~")`` then ``base = home + "/bench"``, ``n = "dev" + "ops"`` then
``os.path.join(h, n, "controls")``, node's ``const d = h + "/x"``, perl's ``$d =
"$h/x"``: string assignments whose every piece is a literal, the home or a variable
already folded are evaluated in order, and a variable holding a home path, a join
call over them, or such a variable joined to literals is a path.

Joins from an absolute directory are read too: node's ``path.join`` under any name
whose first argument is an absolute literal, perl's ``join("/", ...)`` and a list
joined by ``"/"`` (ruby, node), and an absolute value a variable holds once folded from
pieces (version 17).

Version 19 reads pieces joined inside a call too, with no assignment to fold:
``readFileSync('/te' + 'sts/' + f)`` (node's ``+``, perl's ``.`` written with or without
spaces, ruby's ``+``), a template literal (node's backquotes with ``${d}``) or an
interpolated string (ruby's ``"/#{d}/x"``, perl's ``"/$d/x"``) whose variables were
folded (an unknown one is a glob's ``*``). Only an absolute or home value spelled by
more than one piece is kept: a single literal is in the raw text already.

What it cannot see: a piece computed (``chr``, ``join`` of a list built elsewhere, a
rot13, a loop), read from a file, or assigned in a branch the reading cannot order:
the sandbox and the system audit cover those. Bounded: at most :data:`MAX_CODE_PATHS` paths per command, and only the
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


_MAX_ASSIGNMENTS = 200
_MAX_VALUE_CHARS = 1024
# ``name = expr`` (python, node's const/let/var, perl's my $name), one statement.
_CODE_ASSIGN = re.compile(
    # (also right after the quote a ``-e``/``-c`` string opens with: the program's
    # first statement)
    r"""(?:^|(?<=[;\n{(])|(?<=-[ec][ \t]['"]))[ \t]*(?:(?:const|let|var|my|our|local)[ \t]+)?"""
    r"""(\$?[A-Za-z_]\w{0,40})[ \t]*=(?![=~])[ \t]*([^;\n]{1,400})"""
)
_JOIN_FUNC = re.compile(
    r"""(?:os\.path\.join|posixpath\.join|path\.join|path\.resolve|File\.join|"""
    r"""(?:pathlib\.)?(?:Pure(?:Posix)?)?Path"""
    # node's path module under another name (const p = require('path')): only a join
    # whose first argument is an absolute literal, so a string's join is not taken.
    r"""|\b[A-Za-z_$][\w$]{0,20}\.(?:join|resolve)(?=\(\s*['"]/))\s*\("""
)
# A list joined by "/": perl's join("/", LIST), ruby's and node's [..].join("/").
_SLASH_JOIN = re.compile(
    r"""\bjoin\(\s*(?P<q1>['"])/(?P=q1)\s*,(?P<perl>[^()\n]{1,400})\)"""
    r"""|\[(?P<list>[^\[\]\n]{1,400})\]\s*\.\s*join\(\s*(?P<q2>['"])/(?P=q2)\s*\)"""
)
_PERL_VAR = re.compile(r"\$\{?([A-Za-z_]\w{0,40})\}?")
_IDENT = re.compile(r"\$?[A-Za-z_]\w{0,40}")
# A chain of literals and names joined by ``+`` or perl's ``.`` inside any expression
# (a call's argument): ``'/te'+'sts/'+f``, ``"/te"."sts"``. At least one piece quoted.
_PIECE = r"""(?:'[^'\\\n]{0,200}'|"[^"\\\n]{0,200}"|\$?[A-Za-z_]\w{0,40})"""
_CONCAT = re.compile(_PIECE + r"""(?:[ \t]*[+.][ \t]*""" + _PIECE + r"""){1,7}""")
# A node template literal, or a ruby/perl double-quoted string, with substitutions.
_TEMPLATE = re.compile(r"""`(?P<tpl>[^`\\\n]{1,300})`|"(?P<dq>[^"\\\n]{1,300})\"""")
_TEMPLATE_SUB = re.compile(r"""\$\{\s*([A-Za-z_]\w{0,40})\s*\}|#\{\s*([A-Za-z_]\w{0,40})\s*\}""")
# Cheap test for either shape before the regexes above run.
_INLINE_HINT = re.compile(r"""['"][ \t]*[+.]|[+.][ \t]*['"]|\$\{|#\{|"/[^"\n]{0,200}\$""")


def _split_top(expr: str, separators: str) -> list[tuple[str, str]]:
    """``expr`` split at top-level separator characters (outside quotes and brackets),
    each piece with the separator before it."""
    parts: list[tuple[str, str]] = []
    depth, quote, start, sep = 0, "", 0, ""
    for index, char in enumerate(expr):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and char in separators:
            # perl's concatenation is " . "; a "." elsewhere is a method call.
            if (
                char == "."
                and not (
                    expr[index - 1 : index] == " "
                    or expr[index + 1 : index + 2] == " "
                    # ``"/te"."sts"``: a dot between a closing and an opening quote (or a
                    # perl variable) joins strings; ``'a'.join(x)`` is a method call.
                    or (expr[index - 1 : index] in "'\"" and expr[index + 1 : index + 2] in "'\"$")
                )
            ):
                continue
            parts.append((sep, expr[start:index]))
            start, sep = index + 1, char
    parts.append((sep, expr[start:]))
    return parts


def _folded(expr: str, env: dict[str, str], depth: int = 0) -> str | None:
    """The string ``expr`` evaluates to, when every piece is a literal, the home or a
    folded variable; ``None`` otherwise."""
    expr = expr.strip()
    if not expr or depth > 4:
        return None
    home = _HOME_EXPR.fullmatch(expr)
    if home is not None:
        return "~"
    join = _JOIN_FUNC.match(expr)
    if join is not None and expr.endswith(")"):
        inner = expr[join.end() : -1]
        pieces = [_folded(piece, env, depth + 1) for _, piece in _split_top(inner, ",")]
        # A piece the reading cannot fold (a loop variable) is one unknown component, a
        # glob's ``*``; the first piece must be known, or the path's root is not.
        first = pieces[0] if pieces else None
        if first is not None:
            return "/".join(
                [first, *("*" if piece is None else piece.strip("/") for piece in pieces[1:])]
            )
        return None
    parts = _split_top(expr, "+/.")
    if len(parts) > 1:
        out = ""
        for sep, piece in parts:
            value = _folded(piece, env, depth + 1)
            if value is None:
                return None
            out += ("/" + value.lstrip("/")) if sep == "/" else value
        return out
    if len(expr) >= 2 and expr[0] == expr[-1] and expr[0] in "'\"":
        body = expr[1:-1]
        if "'" in body or '"' in body:
            return None
        if expr[0] == '"' and "$" in body:
            body = _PERL_VAR.sub(
                lambda m: env.get("$" + m.group(1), env.get(m.group(1), m.group(0))), body
            )
            if "$ENV{" in body:
                body = _INTERPOLATED.sub(lambda m: "~" + m.group("rest"), body)
        return body
    if _IDENT.fullmatch(expr) and expr in env:
        return env[expr]
    return None


def _folded_paths(code: str) -> list[str]:
    """Home paths held in variables, or built from them by a join call or by literals
    joined to them."""
    env: dict[str, str] = {}
    pieced: set[str] = set()  # variables folded from more than one piece
    for count, match in enumerate(_CODE_ASSIGN.finditer(code)):
        if count >= _MAX_ASSIGNMENTS:
            break
        expr = match.group(2).rstrip()
        value = _folded(expr, env)
        if value is not None and len(value) <= _MAX_VALUE_CHARS:
            env[match.group(1)] = value
            if len(_split_top(expr, "+/.")) > 1 or _JOIN_FUNC.match(expr.strip()):
                pieced.add(match.group(1))
    homes = {name: value for name, value in env.items() if value == "~" or value.startswith("~/")}
    found = [value for value in homes.values() if value != "~"]
    # An absolute path a variable holds once folded from pieces ('/tes' + 'ts'): the
    # pieces alone never spell it (a plain literal is in the raw text already).
    found.extend(
        value
        for name, value in env.items()
        if value.startswith("/") and value.strip("/*") and name in pieced
    )
    for listed in _SLASH_JOIN.finditer(code):
        inner = listed.group("perl") or listed.group("list") or ""
        folded = [_folded(piece, env) for _, piece in _split_top(inner, ",")]
        if folded and all(piece is not None for piece in folded):
            value = "/".join(piece for piece in folded if piece is not None)
            if value.startswith(("/", "~/")) and value.strip("/*~"):
                found.append(value)
    # Join calls over literals and folded variables, from the home or from an absolute
    # directory (node's ``path.join('/home/agent', d, 'controls')``).
    for join in _JOIN_FUNC.finditer(code):
        end = code.find(")", join.end())
        if 0 < end - join.end() <= 400:
            value = _folded(code[join.start() : end + 1], env)
            if value is not None and value.startswith(("~/", "/")) and value.strip("/*~"):
                found.append(value)
    if _INLINE_HINT.search(code) is not None:
        found.extend(_inline_paths(code, env))
    if not homes:
        return found
    names = "|".join(re.escape(name) for name in sorted(homes, key=len, reverse=True))
    for match in re.finditer(r"(?<![\w$])(?:" + names + r")(?!\w)", code):
        pieces = _pieces_after(code, match.end(), in_join=False)
        if pieces:
            found.append(
                homes[match.group(0)].rstrip("/") + "/" + "/".join(p.strip("/") for p in pieces)
            )
    return found


def inline_hinted(text: str) -> bool:
    """Whether ``text`` may join path pieces where they are used (the caller's cheap
    test before :func:`code_paths`)."""
    return _INLINE_HINT.search(text[:MAX_CODE_CHARS]) is not None


def _inline_paths(code: str, env: dict[str, str]) -> list[str]:
    """Absolute or home paths spelled by pieces joined where they are used (a call's
    argument), and by template or interpolated strings over folded variables."""
    found: list[str] = []
    for match in _CONCAT.finditer(code):
        expr = match.group(0)
        if "'" not in expr and '"' not in expr:
            continue
        value = _folded(expr, env)
        if value is not None and value.startswith(("/", "~/")) and value.strip("/*~"):
            found.append(value)
        if len(found) >= MAX_CODE_PATHS:
            return found
    for match in _TEMPLATE.finditer(code):
        body = match.group("tpl") or match.group("dq") or ""
        substituted = _TEMPLATE_SUB.sub(lambda m: env.get(m.group(1) or m.group(2), "*"), body)
        if match.group("dq") is not None:
            # perl's "$d" (a name it never assigned stays as typed, and is skipped below).
            substituted = _PERL_VAR.sub(
                lambda m: env.get("$" + m.group(1), env.get(m.group(1), m.group(0))),
                substituted,
            )
        if substituted == body or "$" in substituted or " " in substituted:
            continue
        if substituted.startswith(("/", "~/")) and substituted.strip("/*~"):
            found.append(substituted)
        if len(found) >= MAX_CODE_PATHS:
            break
    return found


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
    if (
        "=" in code
        or "join" in code
        or _JOIN_FUNC.search(code) is not None
        or _INLINE_HINT.search(code) is not None
    ):
        for path in _folded_paths(code):
            add(path)
            if len(found) >= MAX_CODE_PATHS:
                break
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
