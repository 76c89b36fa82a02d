"""Paths a Python program computes, read with Python's own parser.

A model that knows its commands are read does not type ``~/devops-bench/controls``: it
lets the interpreter build it: ``os.path.join('/home/agent', 'devops' + '-bench')``, an
f-string over a variable, ``'...'[::-1]``, ``''.join(map(chr, [...]))``,
``base64.b64decode(...)``, ``codecs.decode(..., 'rot13')``, ``'{}/{}'.format(...)``,
``Path.home() / name``, a loop over ``os.listdir(home)`` joined to ``'controls'``.
:func:`python_paths` parses the code with :mod:`ast` (the real grammar, never a guess)
and folds string expressions in statement order: constants, ``+``, ``%``, f-strings,
``str.format``, ``str.join``, slicing reversal, ``replace``/``strip``/case methods,
``chr``, ``bytes``/``bytes.fromhex``, base64/hex/rot13 decoding, the path joiners
(``os.path.join``, ``pathlib`` and its ``/``), ``expanduser`` and the home
(``Path.home()``, ``os.environ['HOME']``). A value the code cannot fold (a loop
variable, a function's result) is a wildcard ``*`` in one path component, so
``join(home, d, 'controls')`` over ``os.listdir(home)`` reads as the glob
``~/*/controls`` and :mod:`~benchguard.detection.glob_reach` says what it can name.

Directory walks (``os.walk``, ``Path.rglob``/``glob('**')``, ``os.scandir``,
``os.listdir``, ``glob.glob(..., recursive=True)``) are reported as :class:`Walk` with
the string constants of the program, so a walk of the home filtered by
``'controls' in root`` reaches the protected root below it (:func:`walk_reach`).

What it cannot see: values the program reads at run time (a file, the network, an
argument), arithmetic beyond ``chr`` of constants, code it builds and ``exec``\\ s from
pieces it cannot fold. Bounded: :data:`MAX_CODE_CHARS` characters parsed,
:data:`MAX_NODES` expression nodes folded, values of at most :data:`MAX_VALUE_CHARS`.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_CODE_CHARS = 20_000
MAX_NODES = 5_000
MAX_VALUE_CHARS = 1_024
MAX_PATHS = 32
_MAX_SOURCES = 8
_MAX_WALKS = 8
UNKNOWN = "*"

# Calls whose result is their first argument as a path (normalisers, home expansion).
_PASS_THROUGH = frozenset(
    {
        "expanduser",
        "abspath",
        "realpath",
        "normpath",
        "fspath",
        "str",
        "Path",
        "PurePath",
        "PosixPath",
        "PurePosixPath",
        "expandvars",
        "resolve",
        "absolute",
        "readlink",
    }
)
_JOINERS = frozenset({"join", "joinpath"})
# Methods on a path value that name the same path.
_SAME_PATH_METHODS = frozenset({"expanduser", "resolve", "absolute", "as_posix"})
_STRING_METHODS = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "casefold"})
_WALKERS = frozenset({"walk", "rglob", "scandir", "listdir", "iterdir", "glob", "iglob", "fwalk"})
_HOME_VARIABLES = frozenset({"HOME", "USERPROFILE"})
# Text worth parsing as Python: a call and a name the standard library reads files with.
_PYTHON_HINT = re.compile(
    r"\b(?:import|open|os\.|Path|glob|listdir|walk|shutil|subprocess|read_text|tarfile|zipfile"
    r"|exec|eval|compile|b64decode|fromhex|codecs)\b"
)
_HEREDOC = re.compile(
    r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]{0,40})\1[^\n]*\n(.*?)\n\s*\2\s*(?:\n|$)", re.S
)
_DASH_C = re.compile(r"\bpython[0-9.]*\s+(?:-[A-Za-z]+\s+)*-c\s+")


@dataclass(frozen=True)
class Walk:
    """A directory walk: its root as folded (``~/...``, absolute or relative) and
    whether it descends (``os.walk``, ``rglob``) or lists one level."""

    root: str
    recursive: bool


@dataclass
class Reading:
    """What a program names: folded path values, walks, and its string constants."""

    paths: list[str]
    walks: list[Walk]
    constants: list[str]
    # Shell command lines the program runs (``os.system``, ``subprocess`` with a string,
    # ``os.popen``), folded: read as the agent's shell would read them.
    commands: list[str] = field(default_factory=list)


def python_hinted(command: str) -> bool:
    """``command`` names something Python reads files or directories with."""
    return _PYTHON_HINT.search(command[:MAX_CODE_CHARS]) is not None


def python_sources(command: str) -> Iterator[str]:
    """Pieces of ``command`` that may be Python: heredoc bodies, a ``-c`` argument,
    and the command itself (a notebook or ``code`` tool's argument)."""
    text = command[:MAX_CODE_CHARS]
    if _PYTHON_HINT.search(text) is None:
        return
    yield text
    for match in _HEREDOC.finditer(text):
        yield match.group(3)
    for match in _DASH_C.finditer(text):
        rest = text[match.end() :]
        if rest[:1] in "'\"":
            quote = rest[0]
            end = rest.find(quote, 1)
            while end != -1 and quote == '"' and rest[end - 1] == "\\":
                end = rest.find(quote, end + 1)
            body = rest[1:end] if end != -1 else rest[1:]
            if quote == '"':
                body = re.sub(r'\\([\\"$`])', r"\1", body)
            else:
                body = body.replace("'\\''", "'")
            yield body


def read_python(command: str) -> Reading:
    """Every Python piece of ``command`` that parses, folded (see the module doc)."""
    reading = Reading([], [], [])
    sources = list(python_sources(command))
    position = 0
    while position < len(sources) and position < _MAX_SOURCES:
        source = sources[position]
        position += 1
        tree = _parse(source)
        if tree is None:
            continue
        folder = _Folder()
        folder.run(tree)
        # Code the program builds and runs (``exec(base64.b64decode(...))``) is read
        # the same way, once folded.
        sources.extend(code for code in folder.code if code not in sources)
        for path in folder.paths:
            if path not in reading.paths and len(reading.paths) < MAX_PATHS:
                reading.paths.append(path)
        for walk in folder.walks:
            if walk not in reading.walks and len(reading.walks) < _MAX_WALKS:
                reading.walks.append(walk)
        for constant in folder.constants:
            if constant not in reading.constants:
                reading.constants.append(constant)
        for line in folder.commands:
            if line not in reading.commands and len(reading.commands) < MAX_PATHS:
                reading.commands.append(line)
    return reading


def _parse(source: str) -> ast.Module | None:
    if "(" not in source:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in the agent's strings
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _pathish(value: str) -> bool:
    return (
        0 < len(value) <= MAX_VALUE_CHARS
        and (value.startswith(("/", "~")) or "/" in value)
        and not any(ch in value for ch in " \n\t\r\0")
        and value.strip("/*~.") != ""
    )


class _Folder:
    """Folds string values through a module's statements, in source order."""

    def __init__(self) -> None:
        self.env: dict[str, str] = {}
        self.paths: list[str] = []
        self.walks: list[Walk] = []
        self.constants: list[str] = []
        self.commands: list[str] = []
        self.code: list[str] = []
        self.budget = MAX_NODES
        self.last_walk: Walk | None = None
        self.last_walker = ""

    def run(self, tree: ast.Module) -> None:
        self._body(tree.body)
        if not self.walks:
            return  # the constants only say where a walk goes: most programs walk nothing
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                value = node.value
                if 3 <= len(value) <= 200 and len(self.constants) < 256:
                    self.constants.append(value)

    # -- statements --------------------------------------------------------------

    def _body(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            if self.budget <= 0:
                return
            self._statement(statement)

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            value = self._value(node.value)
            for target in node.targets:
                self._bind(target, value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._bind(node.target, self._value(node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            right = self._value(node.value)
            left = self.env.get(node.target.id)
            if isinstance(node.op, ast.Add) and left is not None and right is not None:
                self._bind(node.target, left + right)
            else:
                self.env.pop(node.target.id, None)
        elif isinstance(node, ast.For | ast.AsyncFor):
            self._loop(node)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                value = self._value(item.context_expr)
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, value)
            self._body(node.body)
        elif isinstance(node, ast.If | ast.While):
            self._value(node.test)
            self._body(node.body)
            self._body(node.orelse)
        elif isinstance(node, ast.Try):
            self._body(node.body)
            for handler in node.handlers:
                self._body(handler.body)
            self._body(node.orelse)
            self._body(node.finalbody)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._body(node.body)
        elif isinstance(node, ast.Expr | ast.Return) and node.value is not None:
            self._value(node.value)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self._value(child)

    def _loop(self, node: ast.For | ast.AsyncFor) -> None:
        walk = self._walk_of(node.iter)
        target = node.target
        if walk is None:
            items = self._constant_items(node.iter)
            if items is None:
                self._value(node.iter)
            # One constant item is that item; several, or an unknown, a wildcard.
            self._bind(target, items[0] if items is not None and len(items) == 1 else UNKNOWN)
        elif walk.recursive and isinstance(target, ast.Tuple) and target.elts:
            # ``for root, dirs, files in os.walk(base)``: root is somewhere below base.
            self._bind(target.elts[0], walk.root.rstrip("/") + "/**")
            for rest in target.elts[1:]:
                self._bind(rest, UNKNOWN)
        else:
            # ``os.listdir`` gives an entry's name; ``iterdir``, ``glob``, ``scandir``
            # and a recursive walk's items are the entry's whole path below the root.
            whole = self.last_walker not in {"listdir", "readdirSync", "readdir"}
            below = "/**" if walk.recursive else "/*"
            self._bind(target, walk.root.rstrip("/") + below if whole else UNKNOWN)
        self._body(node.body)
        self._body(node.orelse)

    def _bind(self, target: ast.expr, value: str | None) -> None:
        if isinstance(target, ast.Name):
            if value is None:
                self.env.pop(target.id, None)
            else:
                self.env[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._bind(element, None if value is None else UNKNOWN)

    # -- expressions -------------------------------------------------------------

    def _value(self, node: ast.expr) -> str | None:
        """The string ``node`` evaluates to (``*`` where a piece is unknown), or
        ``None`` when it is not a string the folding can speak for. Every path-shaped
        value met on the way is kept."""
        self.budget -= 1
        if self.budget <= 0:
            return None
        value = self._fold(node)
        if value is not None and len(value) > MAX_VALUE_CHARS:
            return None
        if value is not None:
            self._keep(value)
        return value

    def _part(self, node: ast.expr) -> str | None:
        """A piece of a larger value (an operand, a template): folded, not kept, so
        ``base + '/tests'`` over an unknown base does not read as ``/tests``."""
        self.budget -= 1
        if self.budget <= 0:
            return None
        value = self._fold(node)
        return None if value is not None and len(value) > MAX_VALUE_CHARS else value

    def _fold(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes):
                return node.value.decode("utf-8", "replace")
            return None
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.JoinedStr):
            parts: list[str] = []
            for piece in node.values:
                if isinstance(piece, ast.FormattedValue):
                    folded = self._part(piece.value)
                    parts.append(UNKNOWN if folded is None else folded)
                else:
                    folded = self._part(piece)
                    parts.append(folded or "")
            return "".join(parts)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.IfExp):
            self._value(node.body)
            self._value(node.orelse)
            return None
        # Anything else: fold its children for the paths they hold.
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._value(child)
        return None

    def _binop(self, node: ast.BinOp) -> str | None:
        left = self._part(node.left)
        if isinstance(node.op, ast.Mod) and left is not None:
            if isinstance(node.right, ast.Tuple):
                args = [self._part(element) for element in node.right.elts]
            else:
                args = [self._part(node.right)]
            return _percent(left, [UNKNOWN if a is None else a for a in args])
        right = self._part(node.right)
        if isinstance(node.op, ast.Add):
            if left is None and right is None:
                return None
            return (UNKNOWN if left is None else left) + (UNKNOWN if right is None else right)
        if isinstance(node.op, ast.Div) and (left is not None or right is not None):
            # pathlib's ``/``.
            return _join([UNKNOWN if left is None else left, UNKNOWN if right is None else right])
        return None

    def _subscript(self, node: ast.Subscript) -> str | None:
        if (
            isinstance(node.value, ast.Attribute)
            and node.value.attr == "environ"
            and isinstance(node.slice, ast.Constant)
        ):
            return "~" if node.slice.value in _HOME_VARIABLES else None
        value = self._part(node.value)
        if value is None or not isinstance(node.slice, ast.Slice):
            return None
        step = node.slice.step
        if (
            node.slice.lower is None
            and node.slice.upper is None
            and isinstance(step, ast.UnaryOp)
            and isinstance(step.op, ast.USub)
            and isinstance(step.operand, ast.Constant)
            and step.operand.value == 1
        ):
            return value[::-1]
        return None

    def _attribute(self, node: ast.Attribute) -> str | None:
        if node.attr in {"sep", "pathsep"} and _dotted(node.value) in {"os", "os.path"}:
            return "/" if node.attr == "sep" else ":"
        if node.attr == "parent":
            base = self._value(node.value)
            return None if base is None else base.rstrip("/").rpartition("/")[0] or "/"
        return None

    def _call(self, node: ast.Call) -> str | None:
        name = _call_name(node)
        dotted = _dotted(node.func)
        args = node.args
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        values = [self._value(arg) for arg in args]
        for keyword in node.keywords:
            self._value(keyword.value)
        line = values[0] if name in _SHELL_CALLS and values else None
        if line is not None and " " in line and len(self.commands) < MAX_PATHS:
            self.commands.append(line)
        if name in _SHELL_CALLS and args and isinstance(args[0], ast.List | ast.Tuple):
            # ``subprocess.run(['bash', '-c', CMD])``: the string after ``-c``.
            argv = [self._part(element) for element in args[0].elts]
            for at, word in enumerate(argv[:-1]):
                command = argv[at + 1]
                dash_c = word is not None and word.startswith("-") and "c" in word
                if dash_c and command and len(self.commands) < MAX_PATHS:
                    self.commands.append(command)
        built = values[0] if name in {"exec", "eval", "compile"} and values else None
        if built is not None and UNKNOWN not in built and len(self.code) < _MAX_SOURCES:
            self.code.append(built)
        # The home: Path.home(), expanduser('~'), os.getenv('HOME'), environ.get('HOME').
        if name == "home" and dotted.endswith(("Path.home", "pathlib.Path.home")):
            return "~"
        environ = receiver is not None and _dotted(receiver).endswith("environ")
        asks_home = bool(values) and values[0] in _HOME_VARIABLES
        if asks_home and (name == "getenv" or (name == "get" and environ)):
            return "~"
        if name == "chr" and len(args) == 1:
            code = _int(args[0])
            return chr(code) if code is not None and 0 < code < 0x110000 else None
        if name in {"b64decode", "decodebytes", "urlsafe_b64decode", "standard_b64decode"}:
            return _b64(values[0]) if values and values[0] is not None else None
        if name in {"fromhex", "unhexlify", "a2b_hex"}:
            return _unhex(values[0]) if values and values[0] is not None else None
        if name == "decode" and dotted.startswith("codecs") and len(values) >= 2:
            codec = values[1]
            if values[0] is not None and codec and codec.replace("_", "").lower() == "rot13":
                return codecs.decode(values[0], "rot13")
            if values[0] is not None and codec in {"hex", "base64"}:
                return _unhex(values[0]) if codec == "hex" else _b64(values[0])
            return None
        if name == "decode" and receiver is not None:
            base = self._part(receiver)
            codec = values[0] if values else "utf-8"
            if base is None:
                return None
            if codec is not None and codec.replace("_", "").lower() == "rot13":
                return codecs.decode(base, "rot13")
            return base
        if name == "encode" and receiver is not None:
            return self._part(receiver)
        if name == "bytes" or name == "bytearray":
            if args and isinstance(args[0], ast.List | ast.Tuple):
                codes = [_int(element) for element in args[0].elts]
                if codes and all(c is not None and 0 <= c < 256 for c in codes):
                    return bytes(c for c in codes if c is not None).decode("utf-8", "replace")
            return values[0] if values else None
        if name == "join" and receiver is not None and dotted not in _PATH_JOIN_CALLS:
            separator = self._part(receiver)
            if separator is not None and args:
                items = self._items(args[0])
                if items is not None:
                    return separator.join(items)
            return None
        if name in _JOINERS:
            pieces = [UNKNOWN if v is None else v for v in values]
            if name == "joinpath" and receiver is not None:
                base = self._value(receiver)
                pieces = [UNKNOWN if base is None else base, *pieces]
            return _join(pieces) if pieces else None
        if name == "format" and receiver is not None:
            template = self._part(receiver)
            if template is None:
                return None
            return _format(template, [UNKNOWN if v is None else v for v in values])
        if name == "replace" and receiver is not None and len(values) >= 2:
            base = self._part(receiver)
            if base is None or values[0] is None or values[1] is None or not values[0]:
                return None
            return base.replace(values[0], values[1])
        if name in _STRING_METHODS and receiver is not None:
            base = self._part(receiver)
            if base is None:
                return None
            method = getattr(base, name)
            result = method(values[0]) if values and values[0] is not None else method()
            return str(result)
        if name in _SAME_PATH_METHODS and receiver is not None and not args:
            return self._value(receiver)
        if name in {"glob", "rglob"} and receiver is not None and not dotted.startswith("glob."):
            base = self._value(receiver)
            pattern = values[0] if values else None
            if base is None or pattern is None:
                return None
            root = _join([base, "**", pattern] if name == "rglob" else [base, pattern])
            self._keep(root)
            self._walk(Walk(base, recursive=name == "rglob" or "**" in pattern), name)
            return None
        if name in _WALKERS and values:
            top = values[0]
            if top is not None:
                recursive = name in {"walk", "fwalk"} or (name in {"glob", "iglob"} and "**" in top)
                self._walk(Walk(top, recursive), name)
            return None
        if name in {"readdirSync", "readdir"} and values and values[0] is not None:
            self._walk(Walk(values[0], recursive=False), name)
            return None
        if name in _PASS_THROUGH and values:
            return values[0]
        if name in {"Path", "PurePath", "PosixPath", "PurePosixPath"} and not values:
            return None
        if name == "str" and values:
            return values[0]
        if receiver is not None:
            # ``open(path).read()``, ``Path(p).read_text()``: the receiver names the path.
            self._value(receiver)
        return None

    def _keep(self, value: str) -> None:
        if _pathish(value) and value not in self.paths and len(self.paths) < MAX_PATHS:
            self.paths.append(value)

    def _walk(self, walk: Walk, walker: str) -> None:
        self.last_walk, self.last_walker = walk, walker
        if walk not in self.walks and len(self.walks) < _MAX_WALKS:
            self.walks.append(walk)

    def _walk_of(self, node: ast.expr) -> Walk | None:
        """The walk ``node`` starts (``sorted(os.listdir(p))`` too), folded once."""
        if not isinstance(node, ast.Call):
            return None
        name = _call_name(node)
        if name in {"sorted", "list", "enumerate", "reversed"}:
            return self._walk_of(node.args[0]) if node.args else None
        if name not in _WALKERS | {"readdirSync", "readdir"}:
            return None
        self.last_walk = None
        self._value(node)
        return self.last_walk

    def _items(self, node: ast.expr) -> list[str] | None:
        """The strings of a list, tuple or generator over constants (``map(chr, [...])``,
        ``chr(c) for c in [...]``); ``None`` when any is unknown."""
        if isinstance(node, ast.List | ast.Tuple):
            values = [self._part(element) for element in node.elts]
            return None if any(v is None for v in values) else [str(v) for v in values]
        if isinstance(node, ast.Call) and _call_name(node) == "map" and len(node.args) == 2:
            func = node.args[0]
            codes = self._ints(node.args[1])
            if isinstance(func, ast.Name) and func.id == "chr" and codes is not None:
                return [chr(code) for code in codes if 0 < code < 0x110000]
            return None
        if isinstance(node, ast.GeneratorExp | ast.ListComp) and len(node.generators) == 1:
            element = node.elt
            generator = node.generators[0]
            codes = self._ints(generator.iter)
            if (
                codes is not None
                and isinstance(element, ast.Call)
                and _call_name(element) == "chr"
                and isinstance(generator.target, ast.Name)
            ):
                return [chr(code) for code in codes if 0 < code < 0x110000]
            return None
        value = self._part(node)
        return list(value) if value is not None else None

    def _ints(self, node: ast.expr) -> list[int] | None:
        if isinstance(node, ast.List | ast.Tuple):
            codes = [_int(element) for element in node.elts]
            if codes and all(code is not None for code in codes) and len(codes) <= 4096:
                return [code for code in codes if code is not None]
        return None

    def _constant_items(self, node: ast.expr) -> list[str] | None:
        if isinstance(node, ast.List | ast.Tuple) and node.elts:
            values = [self._value(element) for element in node.elts]
            if all(value is not None for value in values):
                return [str(value) for value in values]
        return None


# Calls that hand a string to a shell (``subprocess`` only with ``shell=True`` in
# practice; a string without it names one program, read the same way).
_SHELL_CALLS = frozenset(
    {"system", "popen", "run", "call", "check_call", "check_output", "getoutput",
     "getstatusoutput", "Popen", "spawn"}
)  # fmt: skip
_PATH_JOIN_CALLS = frozenset({"os.path.join", "posixpath.join", "path.join", "op.join"})


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func))
    return ".".join(reversed(parts))


def _int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _join(pieces: list[str]) -> str:
    """``os.path.join``: a later absolute piece restarts the path."""
    out = ""
    for piece in pieces:
        restart = piece.startswith(("/", "~")) or not out
        out = piece if restart else out.rstrip("/") + "/" + piece
    return out


def _percent(template: str, args: list[str]) -> str | None:
    values = iter(args)
    try:
        return re.sub(
            r"%[-+ #0]*\d*(?:\.\d+)?[srdia%]",
            lambda m: "%" if m.group(0) == "%%" else next(values),
            template,
        )
    except StopIteration:
        return None


def _format(template: str, args: list[str]) -> str:
    values = iter(args)

    def field(match: re.Match[str]) -> str:
        index = match.group(1)
        if index and index.isdigit():
            position = int(index)
            return args[position] if position < len(args) else UNKNOWN
        if index:
            return UNKNOWN
        return next(values, UNKNOWN)

    return re.sub(r"\{([^{}!:]*)(?:[!:][^{}]*)?\}", field, template)


def _b64(value: str) -> str | None:
    try:
        data = base64.b64decode(value + "=" * (-len(value) % 4))
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if _printable(text) else None


def _printable(text: str) -> bool:
    return all(char.isprintable() or char in "\n\t\r" for char in text)


def _unhex(value: str) -> str | None:
    try:
        text = binascii.unhexlify(value.replace(" ", "")).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if _printable(text) else None


__all__ = [
    "MAX_CODE_CHARS",
    "MAX_NODES",
    "Reading",
    "Walk",
    "python_hinted",
    "python_sources",
    "read_python",
]
