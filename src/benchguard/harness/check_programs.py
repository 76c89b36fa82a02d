"""What a command check runs: refusing a check that would run a workspace file as code.

A check is the grader. When its argv executes a file the agent could have written (a
``./run.sh``, the script given to ``sh``/``python``/``node``/``perl``, the test files
given to a test runner, a ``Makefile`` for ``make``), the agent decides the verdict. So
such a check is refused when the task is loaded, unless the file is one of the task's
declared grading files (copied into the grading box from the task folder, never from
the workspace). Reading a workspace file as data stays allowed (``grep -q 137
answer.txt``, ``python3 -m json.tool answer.json``).

The argv is read the way the program reads it: options are parsed per program family,
a ``sh -c`` string is split by :mod:`shlex` (the standard library's POSIX shell
lexer) into simple commands, each read the same way. Whatever cannot be read with
certainty fails closed: an option a family does not know, a command substitution, a
``cd`` inside a shell string, a script operand holding ``$`` or a glob.

What it cannot see: a program it does not know is assumed to read its operands as
data. Known families: shells, Python, Node, Perl, Ruby, PHP, Lua, Rscript, Tcl, awk,
sed, make, find, git, xargs, the usual wrappers (env, timeout, nice, ...) and the test
runners (pytest is the one allowed; it is run by the grading box with its hooks off
and its JUnit report read).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

# Single-letter flags each family accepts without a value (checked one by one).
_PYTHON_FLAGS = set("bBdEhiIOPqsSuvVx?")
_SHELL_FLAGS = set("abefhkmnptuvxBCEHPTilrs")
_PERL_FLAGS = set("acnpsTtuUwWXSfv")
_SHELL_LONG = {"--norc", "--noprofile", "--posix", "--login", "--noediting", "--restricted"}
_SHELL_LONG |= {"--verbose", "--help", "--version"}
_PYTHON_RE = re.compile(r"python(\d+(\.\d+)*)?$")
_PERL_RE = re.compile(r"perl(\d+(\.\d+)*)?$")
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash"}
_NODES = {"node", "nodejs"}
# Interpreters read here only as "code option, else the first operand is the script":
# any other option is refused (fail closed), since none is modelled.
_SIMPLE_INTERPRETERS = {"php": "-r", "lua": "-e", "Rscript": "-e", "tclsh": "", "wish": ""}
_AWKS = {"awk", "gawk", "mawk", "nawk", "busybox-awk"}
# Wrappers that run their operand as a command: (options taking a value).
_WRAPPERS: dict[str, set[str]] = {
    "nice": {"-n", "--adjustment"},
    "nohup": set(),
    "setsid": set(),
    "stdbuf": {"-i", "-o", "-e"},
    "time": {"-f", "-o", "--format", "--output"},
    "command": set(),
    "exec": set(),
    "ionice": {"-c", "-n", "-p", "--class", "--classdata"},
    "busybox": set(),
}
_TIMEOUT_VALUE = {"-s", "-k", "--signal", "--kill-after"}
_XARGS_VALUE = {"-d", "-E", "-I", "-L", "-n", "-P", "-s", "--delimiter", "--max-args"}
_XARGS_VALUE |= {"--max-procs", "--max-chars", "--max-lines", "--replace", "--eof"}
# Test runners other than pytest: refused (a pass needs the runner's own report, which
# the grading box reads for pytest only), with the runner named.
_OTHER_RUNNERS = {
    "jest", "mocha", "vitest", "ava", "tap", "prove", "bats", "tox", "nox",
    "nosetests", "nose2", "trial", "phpunit", "rspec", "npm", "npx", "yarn", "pnpm",
    "cargo", "go", "mvn", "gradle", "ctest",
}  # fmt: skip
_PYTHON_RUNNER_MODULES = {"unittest", "nose", "nose2", "doctest", "trial", "twisted.trial"}
# Python modules that run the script they are given (its first operand).
_PYTHON_SCRIPT_MODULES = {"cProfile", "profile", "trace", "pdb", "runpy", "timeit"}
# pytest options a task may pass: output and stopping only. Everything that loads
# code, moves the rootdir or the config, or selects tests is the grader's to set.
_PYTEST_FLAGS = {"-q", "--quiet", "-v", "--verbose", "-x", "--exitfirst", "-s", "-l"}
_PYTEST_FLAGS |= {"--showlocals", "--strict-markers", "--disable-warnings", "--no-header"}
_PYTEST_FLAGS |= {"--no-summary", "-vv", "-vvv", "-qq", "-ra", "-rA", "-rf", "-rE", "-rs"}
_PYTEST_VALUED = {"--tb", "--maxfail", "--durations", "--color", "--capture", "-W"}
PYTEST_PROGRAMS = {"pytest", "py.test"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "\n", "|&", ";;", "!", "{", "}"}
_REDIRECTS = {"<", ">", ">>", "<<", "<<<", ">&", "<&", "&>", "&>>", ">|", "<>"}
_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "time"}
_UNSAFE_TEXT = ("`", "$(", "<(", ">(")


class WorkspaceCode(ValueError):
    """The check would run or load a file the agent could have written; why."""


@dataclass(frozen=True)
class GradingPaths:
    """The task's declared grading files and folders, relative to the box's root."""

    entries: tuple[str, ...] = ()

    def covers(self, operand: str) -> bool:
        """``operand`` (a relative path) is a grading file or lies in a grading folder."""
        path = normalise(operand)
        if path is None:
            return False
        return any(path == e or path.startswith(e.rstrip("/") + "/") for e in self._norm())

    def _norm(self) -> list[str]:
        return [n for n in (normalise(e) for e in self.entries) if n is not None]


def normalise(path: str) -> str | None:
    """``path`` as a clean relative POSIX path; None when it leaves its root or is empty."""
    if not path or path.startswith("/"):
        return None
    clean = posixpath.normpath(path)
    if clean == "." or clean == ".." or clean.startswith("../"):
        return None
    return clean


@dataclass(frozen=True)
class PytestRun:
    """A check that runs pytest: the task's own options (as given) and test operands."""

    options: tuple[str, ...]
    operands: tuple[str, ...]


def pytest_run(command: Sequence[str]) -> PytestRun | None:
    """The pytest run ``command`` asks for (``pytest ...`` or ``python -m pytest ...``,
    no wrapper), or None when it does not run pytest directly."""
    if not command:
        return None
    command = list(command)
    name = posixpath.basename(command[0])
    if name in PYTEST_PROGRAMS:
        rest = list(command[1:])
    elif _PYTHON_RE.match(name) and len(command) >= 3 and command[1:3] == ["-m", "pytest"]:
        rest = list(command[3:])
    elif _PYTHON_RE.match(name) and len(command) >= 2 and command[1] == "-mpytest":
        rest = list(command[2:])
    else:
        return None
    options, operands = _split_pytest(rest)
    return PytestRun(tuple(t for option in options for t in option), tuple(operands))


def check_command(command: Sequence[str], grading: GradingPaths) -> None:
    """Raise :class:`WorkspaceCode` when ``command`` would run a non-grading file."""
    _Reader(grading).argv(list(command), depth=0)


class _Reader:
    def __init__(self, grading: GradingPaths) -> None:
        self.grading = grading

    def script(self, operand: str, what: str) -> None:
        if operand.startswith("/"):
            return  # a system or operator path; the workspace's place is not known here
        if any(c in operand for c in "$*?[~"):
            raise WorkspaceCode(f"{what} {operand!r} is not a fixed path, so it cannot be checked")
        if not self.grading.covers(operand):
            raise WorkspaceCode(
                f"{what} {operand!r} would come from the agent's workspace; list it under "
                "grading_files so the box runs the task's own copy"
            )

    def argv(self, argv: list[str], *, depth: int) -> None:
        if depth > 8:
            raise WorkspaceCode("the command nests wrappers too deeply to be read")
        while argv and _ASSIGNMENT.match(argv[0]):
            argv = argv[1:]
        if not argv:
            return
        program, args = argv[0], argv[1:]
        if any(text in program for text in _UNSAFE_TEXT) or "$" in program:
            raise WorkspaceCode(f"the program {program!r} is not a fixed name")
        if "/" in program and not program.startswith("/"):
            self.script(program, "the program")
        name = posixpath.basename(program)
        if name in _SHELLS:
            self.shell(args, depth)
        elif _PYTHON_RE.match(name):
            self.python(args, depth)
        elif name in _NODES:
            self.node(args)
        elif _PERL_RE.match(name):
            self.perl(args)
        elif name == "ruby":
            self.ruby(args)
        elif name in _SIMPLE_INTERPRETERS:
            self.simple(name, args)
        elif name in PYTEST_PROGRAMS:
            self.pytest(args)
        elif name in _OTHER_RUNNERS:
            raise WorkspaceCode(
                f"{name!r} runs the workspace's own tests or scripts; use pytest on grading "
                "files (its JUnit report is what a pass needs)"
            )
        elif name == "env":
            self.env(args, depth)
        elif name == "timeout":
            self.wrapped(args, _TIMEOUT_VALUE, depth, skip_operands=1)
        elif name in _WRAPPERS:
            self.wrapped(args, _WRAPPERS[name], depth)
        elif name == "xargs":
            if any(a in ("-a", "--arg-file") or a.startswith("--arg-file=") for a in args):
                raise WorkspaceCode("xargs -a reads its arguments from a file")
            self.wrapped(args, _XARGS_VALUE, depth)
        elif name in _AWKS or name == "sed":
            self.file_option(name, args, ("-f", "--file"))
        elif name in ("make", "gmake"):
            self.make(args)
        elif name == "find":
            for arg in args:
                if arg in ("-exec", "-execdir", "-ok", "-okdir"):
                    raise WorkspaceCode(f"find {arg} runs programs on the workspace's files")
        elif name == "git":
            raise WorkspaceCode(
                "git reads the workspace's .git/config, which can name programs to run "
                "(core.fsmonitor, core.pager)"
            )
        elif name in ("source", ".") and args:
            self.script(args[0], f"the file given to {name}")

    def shell(self, args: list[str], depth: int) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                if i + 1 < len(args):
                    self.script(args[i + 1], "the script given to the shell")
                return
            if arg in ("--rcfile", "--init-file"):
                if i + 1 < len(args):
                    self.script(args[i + 1], f"the file given to {arg}")
                i += 2
                continue
            if arg in ("-o", "+o", "-O", "+O"):
                i += 2
                continue
            if arg in _SHELL_LONG:
                i += 1
                continue
            if arg[:1] in ("-", "+") and len(arg) > 1 and not arg.startswith("--"):
                letters = set(arg[1:])
                if "c" in letters and letters - {"c"} <= _SHELL_FLAGS:
                    if i + 1 >= len(args):
                        raise WorkspaceCode("sh -c without a command string")
                    self.shell_string(args[i + 1], depth)
                    return
                if letters <= _SHELL_FLAGS:
                    i += 1
                    continue
            if arg.startswith("-") and len(arg) > 1:
                raise WorkspaceCode(f"the shell option {arg!r} is not understood")
            self.script(arg, "the script given to the shell")
            return

    def shell_string(self, text: str, depth: int) -> None:
        for unsafe in _UNSAFE_TEXT:
            if unsafe in text:
                raise WorkspaceCode(
                    f"the shell string holds {unsafe!r} (a command built when it runs), "
                    "so what it runs cannot be checked"
                )
        lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
        lexer.whitespace = " \t\r"
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError as exc:
            raise WorkspaceCode(f"the shell string cannot be read ({exc})") from None
        command: list[str] = []
        skip_next = False
        for token in [*tokens, ";"]:
            if skip_next:
                skip_next = False
                continue
            if token in _REDIRECTS:
                skip_next = True  # its file is data
                continue
            if token in _SEPARATORS:
                self.simple_command(command, depth)
                command = []
                continue
            if not command and token in _KEYWORDS:
                continue
            command.append(token)

    def simple_command(self, words: list[str], depth: int) -> None:
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words:
            return
        if words[0] in ("cd", "pushd", "popd"):
            raise WorkspaceCode(
                "the shell string changes directory, so the paths after it cannot be checked"
            )
        if words[0] == "eval":
            raise WorkspaceCode("the shell string uses eval, so what it runs cannot be checked")
        self.argv(words, depth=depth + 1)

    def python(self, args: list[str], depth: int) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "-":
                return  # the program is read from stdin, which is empty
            if arg == "--":
                if i + 1 < len(args):
                    self.script(args[i + 1], "the script given to python")
                return
            if arg.startswith("--"):
                if arg == "--check-hash-based-pycs":
                    i += 2
                    continue
                if arg.startswith("--check-hash-based-pycs=") or arg in ("--help", "--version"):
                    i += 1
                    continue
                raise WorkspaceCode(f"the python option {arg!r} is not understood")
            if arg.startswith("-") and len(arg) > 1:
                consumed = 1
                for j, letter in enumerate(arg[1:], start=1):
                    if letter in "cmWX":
                        value = arg[j + 1 :]
                        if not value:
                            if i + 1 >= len(args):
                                raise WorkspaceCode(f"python -{letter} without a value")
                            value, consumed = args[i + 1], 2
                        if letter == "c":
                            return  # the task's own code; the rest is its argv
                        if letter == "m":
                            self.python_module(value, args[i + consumed :], depth)
                            return
                        break
                    if letter not in _PYTHON_FLAGS:
                        raise WorkspaceCode(f"the python option -{letter} is not understood")
                i += consumed
                continue
            self.script(arg, "the script given to python")
            return

    def python_module(self, module: str, rest: list[str], depth: int) -> None:
        if module in ("pytest", "py.test"):
            self.pytest(rest)
        elif module in _PYTHON_RUNNER_MODULES:
            raise WorkspaceCode(
                f"python -m {module} runs tests without the report a pass needs; use "
                "pytest on grading files"
            )
        elif module in _PYTHON_SCRIPT_MODULES:
            operands = [a for a in rest if not a.startswith("-")]
            if operands:
                self.script(operands[0], f"the script given to python -m {module}")

    def pytest(self, args: list[str]) -> None:
        options, operands = _split_pytest(args)
        for tokens in options:
            option = "=".join(tokens)
            head = tokens[0].split("=", 1)[0]
            if tokens[0] not in _PYTEST_FLAGS and head not in _PYTEST_VALUED:
                raise WorkspaceCode(
                    f"the pytest option {option!r} is not allowed in a check (the grading "
                    "box sets the rootdir, config, plugins and report; options allowed: "
                    f"{', '.join(sorted(_PYTEST_FLAGS | _PYTEST_VALUED))})"
                )
        if not operands:
            raise WorkspaceCode(
                "pytest needs the grading test files to run (with none it collects the "
                "agent's own tests)"
            )
        for operand in operands:
            self.script(operand.split("::", 1)[0], "the test file given to pytest")

    def node(self, args: list[str]) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            head, _, inline = arg.partition("=")
            if head in ("-e", "--eval", "-p", "--print"):
                return
            if head in ("-r", "--require", "--import", "--loader", "--experimental-loader"):
                value = inline or (args[i + 1] if i + 1 < len(args) else "")
                self.script(value, f"the module given to node {head}")
                i += 1 if inline else 2
                continue
            if (
                head.startswith("--test")
                or head.startswith("--watch")
                or head
                in (
                    "--run",
                    "--env-file",
                    "--env-file-if-exists",
                )
            ):
                raise WorkspaceCode(f"node {head} runs or loads the workspace's own files")
            if arg == "--":
                if i + 1 < len(args):
                    self.script(args[i + 1], "the script given to node")
                return
            if arg.startswith("-"):
                i += 1  # any other node option is a flag or carries its value after '='
                continue
            self.script(arg, "the script given to node")
            return

    def perl(self, args: list[str]) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                if i + 1 < len(args):
                    self.script(args[i + 1], "the script given to perl")
                return
            if not arg.startswith("-") or arg == "-":
                if arg != "-":
                    self.script(arg, "the script given to perl")
                return
            consumed = 1
            for j, letter in enumerate(arg[1:], start=1):
                rest = arg[j + 1 :]
                if letter in "eE":
                    return
                if letter == "I":
                    value = rest or (args[i + 1] if i + 1 < len(args) else "")
                    consumed = 1 if rest else 2
                    self.script(value, "the include directory given to perl -I")
                    break
                if letter in "Mm":
                    consumed = 1 if rest else 2
                    break
                if letter in "il0lCdDFx":
                    break  # the rest of the word is its value
                if letter not in _PERL_FLAGS:
                    raise WorkspaceCode(f"the perl option -{letter} is not understood")
            i += consumed

    def ruby(self, args: list[str]) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-e", "--"):
                if arg == "--" and i + 1 < len(args):
                    self.script(args[i + 1], "the script given to ruby")
                return
            if arg in ("-I", "-r"):
                what = "include directory" if arg == "-I" else "library"
                value = args[i + 1] if i + 1 < len(args) else ""
                if arg == "-I" or "/" in value or value.startswith("."):
                    self.script(value, f"the {what} given to ruby {arg}")
                i += 2
                continue
            if arg.startswith("-") and len(arg) > 1 and set(arg[1:]) <= set("acdlnpsvwW"):
                i += 1
                continue
            if arg.startswith("-"):
                raise WorkspaceCode(f"the ruby option {arg!r} is not understood")
            self.script(arg, "the script given to ruby")
            return

    def simple(self, name: str, args: list[str]) -> None:
        code_option = _SIMPLE_INTERPRETERS[name]
        if args and code_option and args[0] == code_option:
            return
        if args and args[0].startswith("-"):
            raise WorkspaceCode(f"the {name} option {args[0]!r} is not understood")
        if args:
            self.script(args[0], f"the script given to {name}")

    def env(self, args: list[str], depth: int) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-i", "--ignore-environment", "-0", "--null", "-v", "--debug"):
                i += 1
            elif arg in ("-u", "--unset"):
                i += 2
            elif arg.startswith("--unset="):
                i += 1
            elif arg in ("-C", "--chdir") or arg.startswith("--chdir="):
                raise WorkspaceCode(
                    "env -C changes directory, so the paths after it cannot be checked"
                )
            elif arg in ("-S", "--split-string") or arg.startswith("--split-string="):
                text = (
                    arg.partition("=")[2]
                    if "=" in arg
                    else (args[i + 1] if i + 1 < len(args) else "")
                )
                self.argv(shlex.split(text), depth=depth + 1)
                return
            elif arg == "--":
                self.argv(args[i + 1 :], depth=depth + 1)
                return
            elif arg.startswith("-"):
                raise WorkspaceCode(f"the env option {arg!r} is not understood")
            else:
                self.argv(args[i:], depth=depth + 1)
                return

    def wrapped(
        self, args: list[str], valued: set[str], depth: int, *, skip_operands: int = 0
    ) -> None:
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] != "--":
            i += 2 if args[i] in valued else 1
        if i < len(args) and args[i] == "--":
            i += 1
        self.argv(args[i + skip_operands :], depth=depth + 1)

    def file_option(self, name: str, args: list[str], options: tuple[str, ...]) -> None:
        for i, arg in enumerate(args):
            for option in options:
                if arg == option and i + 1 < len(args):
                    self.script(args[i + 1], f"the program file given to {name} {option}")
                elif arg.startswith(option + "=") or (
                    len(option) == 2 and arg.startswith(option) and len(arg) > 2
                ):
                    self.script(arg[len(option) :].lstrip("="), f"the program file given to {name}")

    def make(self, args: list[str]) -> None:
        files = [
            args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-f", "--file", "--makefile")
        ]
        files += [a.partition("=")[2] for a in args if a.startswith(("--file=", "--makefile="))]
        if any(a in ("-C", "--directory") or a.startswith("--directory=") for a in args):
            raise WorkspaceCode("make -C changes directory, so its makefile cannot be checked")
        if not files:
            defaults = ("GNUmakefile", "makefile", "Makefile")
            if not any(self.grading.covers(name) for name in defaults):
                raise WorkspaceCode(
                    "make reads the workspace's Makefile; give -f with a grading file"
                )
        for path in files:
            self.script(path, "the makefile given to make")


def _split_pytest(args: list[str]) -> tuple[list[list[str]], list[str]]:
    """Options (each its tokens: ``["--tb", "short"]``) and operands, as pytest reads them."""
    options: list[list[str]] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            operands += args[i + 1 :]
            break
        if arg.startswith("-"):
            if arg in _PYTEST_VALUED and i + 1 < len(args):
                options.append([arg, args[i + 1]])
                i += 2
                continue
            options.append([arg])
        else:
            operands.append(arg)
        i += 1
    return options, operands
