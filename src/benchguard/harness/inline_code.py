"""Whether code a check gives inline (``python3 -c``, ``node -e``, ``sqlite3 SQL``) can
load workspace code or write files.

The text is the task's own, but ``python3 -c "import sys; sys.path.insert(0, '.');
import grade"`` loads the agent's module as the grader, ``open('grade.py', 'w')``
replaces a grading file before it runs, and ``node -e "require('./x')"`` runs a
workspace file. Each reader returns the reason the text is refused, or None when it
only computes and reads; what a reader cannot follow it refuses (fail closed):

- Python is parsed with :mod:`ast`. Imports are allowed from a short list of
  standard-library modules that load nothing else and start nothing, plus os,
  posixpath and pathlib for reading: os is usable only through its readers
  (``os.path``, ``os.listdir``, ``os.walk``, ...), never passed on. Refused: ``sys.path``
  and the other import hooks, dunder attributes (``().__class__.__subclasses__()``),
  dynamic code (``exec``, ``eval``, ``compile``, ``__import__``, ``getattr``), any
  attribute, on whatever object, that reaches a module or call of power
  (``uuid.os``, ``statistics.random._os``, ``json.codecs``, ``operator.attrgetter``,
  frame globals), ``open`` passed on rather than called, and every write (``open`` or
  a ``.open()`` method in a mode other than reading, ``Path.write_text``, ...).
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
# that starts a program or imports by name. os, posixpath and pathlib can do both, so
# they come with the rules below: os only through its readers, and no attribute of any
# module may reach a module or a call that can (_POWER_ATTRIBUTES).
_PYTHON_DATA_IMPORTS = {
    "json", "math", "re", "sys", "csv", "hashlib", "statistics", "decimal", "fractions",
    "itertools", "collections", "string", "textwrap", "datetime", "functools", "operator",
    "unicodedata", "difflib", "base64", "binascii", "struct", "zlib", "cmath", "numbers",
    "heapq", "bisect", "array", "fnmatch", "time", "calendar", "uuid", "enum", "typing",
    "os", "posixpath", "pathlib",
}  # fmt: skip
# What a check may use of os: reading the file system and the environment. Anything
# else (system, exec*, spawn*, open, fdopen, rename, the os module itself passed on)
# is refused, since os can run every program and write every file.
_OS_READERS = {
    "path", "listdir", "scandir", "walk", "stat", "lstat", "getcwd", "getcwdb",
    "environ", "environb", "getenv", "getenvb", "sep", "altsep", "extsep", "pathsep",
    "linesep", "curdir", "pardir", "devnull", "name", "fspath", "fsencode", "fsdecode",
    "access", "R_OK", "W_OK", "X_OK", "F_OK", "readlink", "cpu_count", "getpid",
    "getuid", "geteuid", "getgid", "getegid", "uname", "strerror", "isatty",
    "get_terminal_size",
}  # fmt: skip
# Attribute names (leading underscores ignored) that reach a module or a call that runs
# programs, writes files, imports by name or evaluates text, whatever object holds
# them: ``uuid.os.system``, ``statistics.random._os``, ``json.codecs.open``,
# ``operator.attrgetter('os')``, ``sys._getframe().f_builtins``,
# ``typing.get_type_hints`` (it evaluates annotation strings). The allowed modules
# import these, so the attribute, not the import, is the way in.
_POWER_ATTRIBUTES = {
    "os", "nt", "posix", "sys", "subprocess", "codecs", "io", "shutil", "importlib",
    "builtins", "ctypes", "socket", "pty", "tempfile", "signal", "threading",
    "multiprocessing", "pickle", "marshal", "runpy", "zipimport", "pkgutil", "imp",
    "sysconfig", "site", "system", "popen", "modules", "fork", "forkpty", "kill",
    "killpg", "putenv", "chdir", "fchdir", "chroot", "get_command_stdout",
    "attrgetter", "methodcaller", "get_type_hints", "ForwardRef", "evaluate",
    "getframe", "f_globals", "f_builtins", "f_locals", "f_back", "f_code", "gi_frame",
    "cr_frame", "ag_frame", "tb_frame", "tb_next", "gi_code", "co_code", "loader",
    "spec", "builtin_module_names",
}  # fmt: skip
_POWER_PREFIXES = ("exec", "spawn")
# Names whose use loads code, runs a program or reaches the import machinery.
_PYTHON_DYNAMIC = {
    "exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr", "globals",
    "locals", "vars", "breakpoint", "input", "memoryview", "__builtins__", "help",
}  # fmt: skip
# sys attributes that decide where imports come from, or run code on events.
_SYS_HOOKS = {"path", "modules", "meta_path", "path_hooks", "path_importer_cache"}
_SYS_HOOKS |= {"settrace", "setprofile", "addaudithook", "excepthook", "displayhook"}
_PYTHON_WRITE_MODES = set("wax+")
# A string argument of a method .open() that is a mode, not a file name ("answer.txt"
# holds a "w" too).
_OPEN_MODE = re.compile(r"[rwxabtU+]{1,4}")
_OPEN_METHODS = {"open", "fdopen"}
# Method names that write or move files (pathlib, shutil, os), whatever the object.
_PYTHON_WRITERS = {
    "write_text", "write_bytes", "touch", "mkdir", "rename", "replace", "unlink",
    "rmdir", "symlink_to", "hardlink_to", "link_to", "chmod", "lchmod", "truncate",
    "write",
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
    os_names = _os_aliases(nodes)
    # The node each node hangs from: a name bound to os is allowed only as the object
    # of a reader's attribute, and open only as the function a call names.
    parents: dict[int, ast.AST] = {}
    for node in nodes:
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in nodes:
        problem = _python_node_problem(node, parents.get(id(node)), os_names)
        if problem is not None:
            return f"the inline python code {problem}"
    return None


def _os_aliases(nodes: list[ast.AST]) -> frozenset[str]:
    """The names the text binds to the os module (``import os``, ``import os as o``)."""
    names: list[str] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "os" or (alias.name.startswith("os.") and not alias.asname):
                    names.append(alias.asname or "os")
    return frozenset(names)


def _powerful(attribute: str) -> bool:
    bare = attribute.lstrip("_")
    return bare in _POWER_ATTRIBUTES or bare.startswith(_POWER_PREFIXES)


def _import_problem(node: ast.Import | ast.ImportFrom) -> str | None:
    if isinstance(node, ast.ImportFrom) and node.level:
        return "imports relative to the working directory"
    modules = (
        [alias.name for alias in node.names]
        if isinstance(node, ast.Import)
        else [node.module or ""]
    )
    for name in modules:
        if name.split(".", 1)[0] not in _PYTHON_DATA_IMPORTS:
            return (
                f"imports {name!r}, which is not a standard-library module known to "
                "load nothing else (a workspace module, or one that can)"
            )
    if isinstance(node, ast.ImportFrom):
        for alias in node.names:
            if alias.name == "*":
                return f"imports * from {node.module!r}, names it cannot list"
            if node.module == "os" and alias.name not in _OS_READERS:
                return f"imports {alias.name!r} from os, which does more than read"
            if _powerful(alias.name):
                return f"imports {alias.name!r}, which runs programs, writes or loads code"
    return None


def _python_node_problem(
    node: ast.AST, parent: ast.AST | None, os_names: frozenset[str]
) -> str | None:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return _import_problem(node)
    if isinstance(node, ast.Name):
        if node.id in _PYTHON_DYNAMIC:
            return f"uses {node.id}, which loads code by name"
        if node.id in os_names and not _is_os_reader(node, parent):
            return "uses os other than through its readers (os.path, os.listdir, ...)"
        if node.id == "open":
            called = isinstance(parent, ast.Call) and parent.func is node
            if not called:
                return "passes open on, so the mode it is called with cannot be read"
        return None
    if isinstance(node, ast.Attribute):
        return _attribute_problem(node, os_names)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "open":
            return _open_problem(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _OPEN_METHODS:
            return _method_open_problem(node, node.func.attr)
    return None


def _is_os_reader(name: ast.Name, parent: ast.AST | None) -> bool:
    """Whether the name bound to os is the object of one of its readers (os.listdir)."""
    return isinstance(parent, ast.Attribute) and parent.value is name and parent.attr in _OS_READERS


def _attribute_problem(node: ast.Attribute, os_names: frozenset[str]) -> str | None:
    if node.attr.startswith("__"):
        return f"reaches the dunder attribute {node.attr}"
    on_name = node.value.id if isinstance(node.value, ast.Name) else None
    if on_name == "sys" and node.attr in _SYS_HOOKS:
        return f"touches sys.{node.attr}, which decides what is imported or run"
    if on_name in os_names and node.attr in _OS_READERS:
        return None
    if _powerful(node.attr):
        return (
            f"reaches .{node.attr}, which runs programs, writes files or loads code "
            "whatever object holds it"
        )
    if node.attr in _PYTHON_WRITERS:
        return f"calls .{node.attr}(), which writes or moves files"
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


def _method_open_problem(call: ast.Call, name: str) -> str | None:
    """``Path(p).open('w')``: the mode is the first argument there, the second in
    other open methods, so every string that reads as a mode counts, and an argument
    that is not a literal is refused (it may be the mode)."""
    values = [*call.args, *(k.value for k in call.keywords if k.arg in (None, "mode"))]
    if any(k.arg is None for k in call.keywords):
        return f"calls .{name}() with keywords it cannot read"
    for value in values:
        if not isinstance(value, ast.Constant) or not isinstance(value.value, str | int):
            return f"calls .{name}() with an argument it cannot read (it may be the mode)"
        text = value.value
        is_mode = isinstance(text, str) and _OPEN_MODE.fullmatch(text) is not None
        if is_mode and set(str(text)) & _PYTHON_WRITE_MODES:
            return f"opens a file for writing (mode {text!r})"
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
    r"exec\w*|spawn\w*|fork|watch\w*|dlopen|cpSync)\b",
    # Case ignored: fs's classes write too (new fs.WriteStream('grade.py')).
    re.IGNORECASE,
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
