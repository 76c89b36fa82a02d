"""Whether code a check gives inline (``python3 -c``, ``node -e``, ``sqlite3 SQL``) can
load workspace code or write files.

The text is the task's own, but ``python3 -c "import sys; sys.path.insert(0, '.');
import grade"`` loads the agent's module as the grader, ``open('grade.py', 'w')``
replaces a grading file before it runs, and ``node -e "require('./x')"`` runs a
workspace file. Each reader returns the reason the text is refused, or None when it
only computes and reads; what a reader cannot follow it refuses (fail closed):

- Python is parsed with :mod:`ast`. Imports are allowed from a short list of
  standard-library modules that load nothing else and start nothing; ``sys.path`` and
  the other import hooks, dunder attributes (``().__class__.__subclasses__()``),
  dynamic code (``exec``, ``eval``, ``compile``, ``__import__``, ``getattr``), and every
  write (``open`` in a mode other than reading, ``Path.write_text``, ``os.rename``, ...)
  are refused.
- JavaScript has no parser here, so node's inline code is read by its words: a
  ``require`` other than of ``fs``, ``path``, ``assert``, ``util`` or ``os`` by a
  literal name, any ``import``, ``process``, ``eval``, ``Function``, ``constructor``,
  global object, computed member access (``x['re' + 'quire']``), or a call that
  writes or starts a program (``writeFileSync``, ``execSync``) refuses it.
- SQL for the sqlite3 shell: any dot-command (``.shell``, ``.system``, ``.read``,
  ``.load``, ...) and the shell's functions that write or load (``writefile``,
  ``edit``, ``load_extension``), ``ATTACH`` and ``VACUUM INTO`` (which create files).

Bounds: the caller's (``check_programs.MAX_CHARS``); :data:`MAX_AST_NODES` for Python.
"""

from __future__ import annotations

import ast
import re

MAX_AST_NODES = 5_000
# Standard-library modules that read and compute only: importing one loads no module
# from the working directory (PYTHONSAFEPATH keeps it off sys.path) and it has no call
# that starts a program or imports by name.
_PYTHON_DATA_IMPORTS = {
    "json", "math", "re", "sys", "csv", "hashlib", "statistics", "decimal", "fractions",
    "itertools", "collections", "string", "textwrap", "datetime", "functools", "operator",
    "unicodedata", "difflib", "base64", "binascii", "struct", "zlib", "cmath", "numbers",
    "heapq", "bisect", "array", "fnmatch", "time", "calendar", "uuid", "enum", "typing",
}  # fmt: skip
# Names whose use loads code, runs a program or reaches the import machinery.
_PYTHON_DYNAMIC = {
    "exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr", "globals",
    "locals", "vars", "breakpoint", "input", "memoryview", "__builtins__", "help",
}  # fmt: skip
# sys attributes that decide where imports come from, or run code on events.
_SYS_HOOKS = {"path", "modules", "meta_path", "path_hooks", "path_importer_cache"}
_SYS_HOOKS |= {"settrace", "setprofile", "addaudithook", "excepthook", "displayhook"}
_PYTHON_WRITE_MODES = set("wax+")
# Method names that write or move files (pathlib, shutil, os), whatever the object.
_PYTHON_WRITERS = {
    "write_text", "write_bytes", "touch", "mkdir", "rename", "replace", "unlink",
    "rmdir", "symlink_to", "hardlink_to", "chmod", "truncate", "write",
}  # fmt: skip


def python_inline_problem(text: str) -> str | None:
    """Why ``python -c text`` can load workspace code or write a file; None if not."""
    try:
        tree = ast.parse(text, mode="exec")
    except (SyntaxError, ValueError) as exc:
        return f"the inline python code cannot be read ({exc.__class__.__name__})"
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_AST_NODES:
        return f"the inline python code has more than {MAX_AST_NODES} syntax nodes"
    for node in nodes:
        problem = _python_node_problem(node)
        if problem is not None:
            return f"the inline python code {problem}"
    return None


def _python_node_problem(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import | ast.ImportFrom):
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
        )
        if isinstance(node, ast.ImportFrom) and node.level:
            return "imports relative to the working directory"
        for name in names:
            if name.split(".", 1)[0] not in _PYTHON_DATA_IMPORTS:
                return (
                    f"imports {name!r}, which is not a standard-library module known to "
                    "load nothing else (a workspace module, or one that can)"
                )
    elif isinstance(node, ast.Name) and node.id in _PYTHON_DYNAMIC:
        return f"uses {node.id}, which loads code by name"
    elif isinstance(node, ast.Attribute):
        if node.attr.startswith("__"):
            return f"reaches the dunder attribute {node.attr}"
        sys_hook = isinstance(node.value, ast.Name) and node.value.id == "sys"
        if sys_hook and node.attr in _SYS_HOOKS:
            return f"touches sys.{node.attr}, which decides what is imported or run"
        if node.attr in _PYTHON_WRITERS:
            return f"calls .{node.attr}(), which writes or moves files"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
        return _open_problem(node)
    return None


def _open_problem(call: ast.Call) -> str | None:
    mode: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
        elif keyword.arg is None:
            return "calls open() with keywords it cannot read"
    if len(call.args) > 2 or any(k.arg == "opener" for k in call.keywords):
        return "calls open() with arguments it cannot read"
    if mode is None:
        return None
    if not isinstance(mode, ast.Constant) or not isinstance(mode.value, str):
        return "calls open() with a mode it cannot read"
    if set(mode.value) & _PYTHON_WRITE_MODES:
        return f"opens a file for writing (mode {mode.value!r})"
    return None


# Words that load a module, run code from a string, or reach the process and the
# global object, and a computed member access (x['re' + 'quire']) or a \u escape
# (\u0072equire is require as an identifier).
_NODE_REFUSED = re.compile(
    r"\b(require|import|process|eval|Function|constructor|globalThis|global|this|module|"
    r"exports|Reflect|Proxy|WebAssembly|setTimeout|setInterval|setImmediate|queueMicrotask|"
    r"prototype|__proto__|Deno|Bun|fetch|Worker)\b|\\u|[\w$)\]'\"`]\s*\["
)


# require() of a built-in module by a literal name (read whole: no concatenation);
# what the module can do beyond reading is refused by _NODE_WRITES.
_NODE_BUILTIN_REQUIRE = re.compile(
    r"""\brequire\(\s*(['"])(node:)?(fs|path|assert|util|os)\1\s*\)"""
)
_NODE_WRITES = re.compile(
    r"\b(write\w*|append\w*|create\w*Stream|copy\w*|cp\w*|rename\w*|rm\w*|unlink\w*|"
    r"mkdir\w*|symlink\w*|link\w*|truncate\w*|ch(mod|own)\w*|l?utimes\w*|open\w*|"
    r"exec\w*|spawn\w*|fork|watch\w*|dlopen|cpSync)\b"
)


def node_inline_problem(text: str) -> str | None:
    """Why ``node -e text`` can load workspace code or write a file; None if not."""
    rest = _NODE_BUILTIN_REQUIRE.sub("builtin_module", text)
    found = _NODE_REFUSED.search(rest)
    if found is not None:
        return (
            f"the inline node code uses {found.group(0).strip()!r}, which can load a "
            "module or run code that cannot be read here"
        )
    written = _NODE_WRITES.search(rest)
    if written is not None:
        return (
            f"the inline node code calls {written.group(0)!r}, which writes files or runs programs"
        )
    return None


_SQL_REFUSED = re.compile(
    r"\b(writefile|edit|load_extension|fts3_tokenizer|attach|vacuum)\b",
    re.IGNORECASE,
)


def sqlite_sql_problem(text: str) -> str | None:
    """Why the sqlite3 shell given ``text`` can run a program, load code or write a
    file; None if it only queries."""
    for line in text.splitlines():
        if line.lstrip().startswith("."):
            command = line.strip().split(None, 1)[0]
            return (
                f"the sqlite3 dot-command {command!r} is a shell command of its own "
                "(.shell and .system run programs, .read and .load load files)"
            )
    found = _SQL_REFUSED.search(text)
    if found is not None:
        return f"the SQL uses {found.group(0)!r}, which writes or loads files"
    return None
