"""How each interpreter and tool family reads its options: which operand is code.

Each reader gets the program's arguments and a :class:`Checker` (``check_programs``'s
reader) to which it hands every operand the program would execute or load as code; it
raises :class:`WorkspaceCode` for an option it does not model (fail closed) and returns
nothing. Reading an operand as data is never reported.

Interpreters that would read their program from standard input (``sh`` with no
script, ``python3 < script.py``, ``cat run.sh | bash``) are refused outright: inside a
shell string stdin can be any workspace file, and a check has no reason to feed a
program that way when ``-c`` or a grading file says the same thing visibly.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Protocol

from benchguard.harness.inline_code import (
    node_inline_problem,
    python_inline_problem,
    sqlite_sql_problem,
)
from benchguard.harness.perl_code import perl_inline_problem
from benchguard.harness.script_texts import awk_runs_programs, sed_runs_programs


class WorkspaceCode(ValueError):
    """The check would run or load a file the agent could have written; why."""


class Checker(Protocol):
    def script(self, operand: str, what: str) -> None: ...

    def not_onto_grading(self, target: str, what: str) -> None: ...

    def covered(self, operand: str) -> bool: ...


PYTHON_RE = re.compile(r"python(\d+(\.\d+)*)?$")
PERL_RE = re.compile(r"perl(\d+(\.\d+)*)?$")
# Single-letter flags each family accepts without a value (checked one by one). Not
# python's -i or perl's... interactive modes read standard input after the script.
_PYTHON_FLAGS = set("bBdEhIOPqsSuvVx?")
_PERL_FLAGS = set("acnpsTtuUwWXSfvhV")
# python -X options that change nothing about where code comes from.
_PYTHON_X = {"utf8", "dev", "importtime", "faulthandler", "tracemalloc", "warn_default_encoding"}
_PYTHON_X |= {"int_max_str_digits", "no_debug_ranges", "frozen_modules"}
# python -m modules that read their operands as data only (the stdlib's own tools).
_PYTHON_DATA_MODULES = {"json.tool", "json", "ast", "tokenize", "base64", "zipfile", "dis"}
_PYTHON_DATA_MODULES |= {"tarfile", "gzip", "filecmp", "tabnanny", "calendar", "platform"}
_PYTHON_DATA_MODULES |= {"sysconfig", "uuid", "site", "this"}
_PYTHON_RUNNER_MODULES = {"unittest", "nose", "nose2", "doctest", "trial", "twisted.trial"}
# Python modules that run the script they are given (its first operand).
_PYTHON_SCRIPT_MODULES = {"cProfile", "profile", "trace", "pdb", "runpy", "timeit"}
# pytest options a task may pass: output and stopping only. Everything that loads
# code, moves the rootdir or the config, or selects tests is the grader's to set.
_PYTEST_FLAGS = {"-q", "--quiet", "-v", "--verbose", "-x", "--exitfirst", "-s", "-l"}
_PYTEST_FLAGS |= {"--showlocals", "--strict-markers", "--disable-warnings", "--no-header"}
_PYTEST_FLAGS |= {"--no-summary", "-vv", "-vvv", "-qq", "-ra", "-rA", "-rf", "-rE", "-rs"}
PYTEST_VALUED = {"--tb", "--maxfail", "--durations", "--color", "--capture", "-W"}
# GNU tar options that name a program tar starts (long names match by any unambiguous
# prefix, as getopt does, so each is matched from its third letter).
_TAR_PROGRAM_OPTIONS = (
    "use-compress-program", "to-command", "rsh-command", "rmt-command",
    "checkpoint-action", "info-script", "new-volume-script",
)  # fmt: skip
_SIMPLE_INTERPRETERS = {"php": "-r", "lua": "-e", "Rscript": "-e", "tclsh": "", "wish": ""}


def _unread_inline(name: str, option: str) -> WorkspaceCode:
    """Inline code of an interpreter no reader here understands: it can run any program
    (ruby -e "system('./x')"), so it is refused, fail closed."""
    return WorkspaceCode(
        f"{name} {option} code cannot be read here (only python -c, node -e, perl -e and "
        "sqlite3's SQL are), and it may run a workspace file; put it in a grading file"
    )


def _stdin_program(name: str) -> WorkspaceCode:
    return WorkspaceCode(
        f"{name} would read its program from standard input, which a redirection or "
        "pipe can fill with a workspace file; give the code with -c/-e or run a grading file"
    )


def python(checker: Checker, args: Sequence[str]) -> tuple[str, list[str]] | None:
    """Check python's argv; return ``(module, rest)`` for ``-m module`` (the caller
    reads pytest), else None."""
    seen: set[str] = set()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-":
            raise _stdin_program("python")
        if arg == "--":
            if i + 1 >= len(args):
                raise _stdin_program("python")
            _python_safe_path(seen)
            checker.script(args[i + 1], "the script given to python")
            return None
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
                        _python_safe_path(seen)
                        # The task's own code (the rest is its argv), read for what
                        # it imports and writes.
                        _inline(python_inline_problem(value), "python -c")
                        return None
                    if letter == "m":
                        _python_safe_path(seen)
                        return value, list(args[i + consumed :])
                    if letter == "X" and value.split("=", 1)[0] not in _PYTHON_X:
                        raise WorkspaceCode(f"the python option -X {value!r} is not understood")
                    break
                if letter not in _PYTHON_FLAGS:
                    raise WorkspaceCode(f"the python option -{letter} is not understood")
                seen.add(letter)
            i += consumed
            continue
        _python_safe_path(seen)
        checker.script(arg, "the script given to python")
        return None
    raise _stdin_program("python")


def _python_safe_path(flags: set[str]) -> None:
    # -E ignores PYTHONSAFEPATH (and PYTHONNOUSERSITE): the working directory, the
    # workspace's copy, would come first on sys.path, so a json/ there is what
    # `-m json.tool` imports. -I and -P keep it off.
    if "E" in flags and not flags & {"I", "P"}:
        raise WorkspaceCode(
            "python -E ignores PYTHONSAFEPATH, so the workspace would be searched for "
            "modules first; add -P or use -I"
        )


def python_module(checker: Checker, module: str, rest: Sequence[str]) -> None:
    """``python -m module rest`` for any module but pytest (the caller reads that)."""
    if module in _PYTHON_RUNNER_MODULES:
        raise WorkspaceCode(
            f"python -m {module} runs tests without the report a pass needs; use "
            "pytest on grading files"
        )
    if module in _PYTHON_SCRIPT_MODULES:
        operands = [a for a in rest if not a.startswith("-")]
        if not operands:
            raise WorkspaceCode(f"python -m {module} without a script is not understood")
        checker.script(operands[0], f"the script given to python -m {module}")
        return
    if module in ("zipfile", "tarfile"):
        _python_archive_module(module, rest)
    if module in ("json.tool", "json"):
        # json.tool IN OUT (or --outfile OUT) writes OUT.
        operands = [a for a in rest if not a.startswith("-")]
        for i, arg in enumerate(rest):
            if arg == "--outfile" and i + 1 < len(rest):
                checker.not_onto_grading(rest[i + 1], f"python -m {module} --outfile")
            elif arg.startswith("--outfile="):
                checker.not_onto_grading(arg.partition("=")[2], f"python -m {module} --outfile")
        if len(operands) > 1:
            checker.not_onto_grading(operands[1], f"python -m {module}'s output")
    if module == "gzip" and any(a in ("-d", "--decompress") for a in rest):
        raise WorkspaceCode(
            "python -m gzip -d writes each file it decompresses beside it; read it "
            "with gzip -dc instead"
        )
    if module not in _PYTHON_DATA_MODULES:
        raise WorkspaceCode(
            f"python -m {module} is not known to read its operands as data only (known: "
            f"{', '.join(sorted(_PYTHON_DATA_MODULES))}, pytest)"
        )


def _python_archive_module(module: str, rest: Sequence[str]) -> None:
    """``python -m zipfile``/``tarfile``: only -l/--list and -t/--test only read."""
    for arg in rest:
        if arg.startswith("-") and arg not in ("-l", "--list", "-t", "--test", "-v", "--verbose"):
            raise WorkspaceCode(
                f"python -m {module} {arg} extracts or creates an archive (-e writes the "
                "members, names the check cannot know, over the grading files); "
                "only -l and -t are allowed"
            )


def pytest(checker: Checker, args: Sequence[str]) -> None:
    options, operands = split_pytest(args)
    for tokens in options:
        option = "=".join(tokens)
        head = tokens[0].split("=", 1)[0]
        if tokens[0] not in _PYTEST_FLAGS and head not in PYTEST_VALUED:
            raise WorkspaceCode(
                f"the pytest option {option!r} is not allowed in a check (the grading "
                "box sets the rootdir, config, plugins and report; options allowed: "
                f"{', '.join(sorted(_PYTEST_FLAGS | PYTEST_VALUED))})"
            )
    if not operands:
        raise WorkspaceCode(
            "pytest needs the grading test files to run (with none it collects the "
            "agent's own tests)"
        )
    for operand in operands:
        checker.script(operand.split("::", 1)[0], "the test file given to pytest")


def split_pytest(args: Sequence[str]) -> tuple[list[list[str]], list[str]]:
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
            if arg in PYTEST_VALUED and i + 1 < len(args):
                options.append([arg, args[i + 1]])
                i += 2
                continue
            options.append([arg])
        else:
            operands.append(arg)
        i += 1
    return options, operands


def node(checker: Checker, args: Sequence[str]) -> None:
    i = 0
    while i < len(args):
        arg = args[i]
        head, _, inline = arg.partition("=")
        if head in ("-e", "--eval", "-p", "--print"):
            value = inline or (args[i + 1] if i + 1 < len(args) else "")
            _inline(node_inline_problem(value), f"node {head}")
            return
        if head in ("-r", "--require", "--import", "--loader", "--experimental-loader"):
            value = inline or (args[i + 1] if i + 1 < len(args) else "")
            checker.script(value, f"the module given to node {head}")
            i += 1 if inline else 2
            continue
        if head.startswith(("--test", "--watch")) or head in (
            "--run",
            "--env-file",
            "--env-file-if-exists",
            "-i",
            "--interactive",
        ):
            raise WorkspaceCode(f"node {head} runs or loads the workspace's own files")
        if arg == "-":
            raise _stdin_program("node")
        if arg == "--":
            if i + 1 >= len(args):
                raise _stdin_program("node")
            checker.script(args[i + 1], "the script given to node")
            return
        if arg.startswith("-"):
            i += 1  # any other node option is a flag or carries its value after '='
            continue
        checker.script(arg, "the script given to node")
        return
    raise _stdin_program("node")


def perl(checker: Checker, args: Sequence[str]) -> None:
    """perl's switches as perlrun lists them, up to the first operand: code from every
    ``-e``/``-E`` is read by perl itself (``perl_code``), the script otherwise; the
    operands after inline code are the names ``<>`` opens."""
    code: list[str] = []
    say = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg == "-" or not arg.startswith("-"):
            break
        i += 1
        j = 1
        while j < len(arg):
            letter, rest = arg[j], arg[j + 1 :]
            if letter in "eE":
                say = say or letter == "E"
                if rest:
                    code.append(rest)
                elif i < len(args):
                    code.append(args[i])
                    i += 1
                else:
                    raise WorkspaceCode(f"perl -{letter} is given no code")
                break
            if letter in "0l":
                # An octal (or -0x hex) number, then more switches: -lane, -00ne.
                pattern = r"x[0-9a-fA-F]+|[0-7]*" if letter == "0" else r"[0-7]*"
                taken = re.match(pattern, rest)
                j += 1 + (len(taken.group(0)) if taken else 0)
                continue
            if letter == "I":
                value = rest or (args[i] if i < len(args) else "")
                i += 0 if rest else 1
                checker.script(value, "the include directory given to perl -I")
                break
            if letter in "Mm":
                raise WorkspaceCode(
                    f"perl -{letter} loads a module, whose subs the inline code may call "
                    "by name where no reader sees them"
                )
            if letter in "CF":
                break  # the rest of the word is its value (a number, a split pattern)
            if letter == "i":
                raise WorkspaceCode("perl -i edits the files it reads in place")
            if letter in "dDx":
                raise WorkspaceCode(f"perl -{letter} loads a debugger or a script from elsewhere")
            if letter not in _PERL_FLAGS:
                raise WorkspaceCode(f"the perl option -{letter} is not understood")
            j += 1
    operands = list(args[i:])
    if not code:
        if not operands or operands[0] == "-":
            raise _stdin_program("perl")
        checker.script(operands[0], "the script given to perl")
        return
    _inline(perl_inline_problem("\n".join(code), say=say), "perl")
    for operand in operands:
        _perl_operand(operand)


def _perl_operand(operand: str) -> None:
    """``<>`` opens each name with two-argument open: ``x|`` runs x, ``>x`` writes x.
    A name the shell would still expand can be any file the agent made."""
    if getattr(operand, "expands", False) or any(c in "$`*?[]{}~\\\0" for c in operand):
        raise WorkspaceCode(
            f"perl's <> opens {operand!r} with two-argument open, and the shell would "
            "still expand it (a file named 'x|' runs x)"
        )
    if (
        operand != operand.strip()
        or operand.startswith(("<", ">", "+", "|"))
        or operand.endswith("|")
    ):
        raise WorkspaceCode(
            f"perl's <> opens {operand!r} with two-argument open, which reads it as a "
            "mode or a program"
        )


def ruby(checker: Checker, args: Sequence[str]) -> None:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-e":
            raise _unread_inline("ruby", "-e")
        if arg == "--":
            if i + 1 >= len(args):
                raise _stdin_program("ruby")
            checker.script(args[i + 1], "the script given to ruby")
            return
        if arg in ("-I", "-r"):
            what = "include directory" if arg == "-I" else "library"
            value = args[i + 1] if i + 1 < len(args) else ""
            if arg == "-I" or "/" in value or value.startswith("."):
                checker.script(value, f"the {what} given to ruby {arg}")
            i += 2
            continue
        if arg.startswith("-") and len(arg) > 1 and set(arg[1:]) <= set("acdlnpsvwW"):
            i += 1
            continue
        if arg.startswith("-"):
            raise WorkspaceCode(f"the ruby option {arg!r} is not understood")
        checker.script(arg, "the script given to ruby")
        return
    raise _stdin_program("ruby")


def simple_interpreter(checker: Checker, name: str, args: Sequence[str]) -> None:
    code_option = _SIMPLE_INTERPRETERS[name]
    if args and code_option and args[0] == code_option:
        raise _unread_inline(name, code_option)
    if args and args[0].startswith("-"):
        raise WorkspaceCode(f"the {name} option {args[0]!r} is not understood")
    if not args:
        raise _stdin_program(name)
    checker.script(args[0], f"the script given to {name}")


def is_simple_interpreter(name: str) -> bool:
    return name in _SIMPLE_INTERPRETERS


def tar(checker: Checker, args: Sequence[str]) -> None:
    """tar runs a program for -I/--use-compress-program, -F, --to-command, ...; and an
    extraction writes the archive's members, names the check cannot know (the archive
    is the agent's), so it must go to standard output (-O) or an absolute -C."""
    extracting = to_stdout = False
    directory: str | None = None
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg.startswith("--"):
            name, _, value = arg[2:].partition("=")
            if len(name) >= 3 and any(o.startswith(name) for o in _TAR_PROGRAM_OPTIONS):
                raise WorkspaceCode(f"tar {arg.split('=', 1)[0]} names a program tar runs")
            extracting |= len(name) >= 2 and ("extract".startswith(name) or name == "get")
            to_stdout |= len(name) >= 3 and "to-stdout".startswith(name)
            if len(name) >= 3 and "directory".startswith(name):
                directory = value or (args[index + 1] if index + 1 < len(args) else "")
            continue
        # A short cluster (or the first word in the old style, 'xIf') holds -I or -F.
        cluster = arg[1:] if arg.startswith("-") else (arg if index == 0 else "")
        if any(letter in cluster for letter in "IF"):
            raise WorkspaceCode(f"tar {arg!r} names a program tar runs (-I or -F)")
        extracting |= "x" in cluster
        to_stdout |= "O" in cluster
        if "C" in cluster:
            rest = cluster[cluster.index("C") + 1 :]
            directory = rest or (args[index + 1] if index + 1 < len(args) else "")
    if extracting and not to_stdout:
        if directory is None or not directory.startswith("/"):
            raise WorkspaceCode(
                "tar extracts the archive's members here, names the check cannot know "
                "(the archive is the agent's), which can replace the task's grading "
                "files; extract to standard output (-O) or an absolute -C directory"
            )
        checker.script(directory, "the directory tar extracts into")


# unzip's modes that write nothing: list, test, pipe to standard output, zipinfo.
_UNZIP_READ_ONLY = set("ltpvZz")


def unzip(checker: Checker, args: Sequence[str]) -> None:
    """unzip writes the archive's members (names the check cannot know) unless it
    lists, tests or pipes them; or into an absolute -d directory."""
    read_only = any(
        a.startswith("-") and not a.startswith("--") and set(a[1:]) & _UNZIP_READ_ONLY for a in args
    )
    if read_only:
        return
    if "-d" in args:
        index = args.index("-d")
        target = args[index + 1] if index + 1 < len(args) else ""
        if target.startswith("/"):
            checker.script(target, "the directory unzip extracts into")
            return
    raise WorkspaceCode(
        "unzip extracts the archive's members here, names the check cannot know (the "
        "archive is the agent's), which can replace the task's grading files; list (-l), "
        "test (-t) or pipe (-p) them, or extract into an absolute -d directory"
    )


# The sqlite3 shell's options that take a value and load nothing.
_SQLITE_VALUED = {"-separator", "-nullvalue", "-newline", "-mmap", "-pagecache", "-lookaside"}
_SQLITE_FLAGS = {"-bail", "-batch", "-csv", "-json", "-line", "-list", "-column", "-header"}
_SQLITE_FLAGS |= {"-noheader", "-readonly", "-box", "-markdown", "-table", "-html", "-quote"}
_SQLITE_FLAGS |= {"-tabs", "-ascii", "-echo", "-safe", "-nofollow", "-stats", "-bail"}


def sqlite3(checker: Checker, args: Sequence[str]) -> None:
    """The sqlite3 shell: its database, then SQL operands read for dot-commands
    (``.shell``, ``.system``) and file functions; -init and -cmd, and SQL from
    standard input, are refused."""
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i].replace("--", "-", 1) if args[i].startswith("--") else args[i]
        if arg in _SQLITE_VALUED:
            i += 2
            continue
        if arg in _SQLITE_FLAGS:
            i += 1
            continue
        if arg.startswith("-"):
            raise WorkspaceCode(
                f"the sqlite3 option {args[i]!r} is not understood (-init and -cmd run "
                "dot-commands, which can start programs)"
            )
        operands.append(args[i])
        i += 1
    if len(operands) < 2:
        raise WorkspaceCode(
            "sqlite3 would read its SQL from standard input, which a redirection or pipe "
            "can fill with a workspace file's dot-commands; give the SQL as an operand"
        )
    checker.not_onto_grading(operands[0], "sqlite3's database")
    for text in operands[1:]:
        _inline(sqlite_sql_problem(text), "sqlite3")


def make(checker: Checker, args: Sequence[str]) -> None:
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--"):
            name, _, value = arg[2:].partition("=")
            if name in ("directory", "include-dir"):
                raise WorkspaceCode(f"make --{name} reads makefiles the check cannot see")
            if name in ("file", "makefile"):
                if not value:
                    value = args[i + 1] if i + 1 < len(args) else ""
                    i += 1
                files.append(value)
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in "CI":
                    raise WorkspaceCode(f"make -{letter} reads makefiles the check cannot see")
                if letter == "f":
                    value = arg[j + 1 :]
                    if not value:
                        value = args[i + 1] if i + 1 < len(args) else ""
                        i += 1
                    files.append(value)
                    break
                if letter in "jlWoO":
                    break  # the rest of the word (or nothing) is its value
        i += 1
    if not files:
        # make looks for GNUmakefile, makefile, then Makefile: a grading Makefile
        # loses to a GNUmakefile the agent adds, so only -f says which file is read.
        raise WorkspaceCode("make reads the first makefile it finds; give -f with a grading file")
    for path in files:
        checker.script(path, "the makefile given to make")


def awk(checker: Checker, name: str, args: Sequence[str]) -> None:
    program: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        option, _, inline = arg.partition("=") if arg.startswith("--") else (arg[:2], "", arg[2:])
        value = inline or (args[i + 1] if i + 1 < len(args) else "")
        step = 1 if inline else 2
        if option in ("-f", "--file", "-E", "--exec", "-i", "--include"):
            checker.script(value, f"the program file given to {name} {option}")
            program = ""
        elif option in ("-l", "--load"):
            raise WorkspaceCode(f"{name} {option} loads a compiled extension")
        elif option in ("-e", "--source"):
            _inline(awk_runs_programs(value), name)
            program = ""
        elif option in ("-v", "--assign", "-F", "--field-separator"):
            pass
        elif len(arg) == 2 or arg.startswith("--"):
            step = 1  # a flag (gawk's --posix, -b, ...)
        else:
            raise WorkspaceCode(f"the {name} option {arg!r} is not understood")
        i += step
    if program is None:
        if i >= len(args):
            raise WorkspaceCode(f"{name} without a program is not understood")
        _inline(awk_runs_programs(args[i]), name)


def sed(checker: Checker, args: Sequence[str]) -> None:
    """sed's scripts, read for the commands that run programs and the files they
    write; with -i every operand is written too."""
    scripts: list[str] = []
    operands: list[str] = []
    in_place = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--"):
            option, _, value = arg.partition("=")
            in_place = in_place or option == "--in-place"
            if option in ("--file", "--expression"):
                if not value:
                    value = args[i + 1] if i + 1 < len(args) else ""
                    i += 1
                if option == "--file":
                    checker.script(value, "the script file given to sed --file")
                scripts.append(value if option == "--expression" else "")
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in "ef":
                    value = arg[j + 1 :]
                    if not value:
                        value = args[i + 1] if i + 1 < len(args) else ""
                        i += 1
                    if letter == "f":
                        checker.script(value, "the script file given to sed -f")
                    scripts.append(value if letter == "e" else "")
                    break
                if letter in "lis":
                    in_place = in_place or letter == "i"
                    break  # -l N, -i[SUFFIX], -s: the rest of the word is a value
        else:
            operands.append(arg)
        i += 1
    if not scripts:
        if not operands:
            raise WorkspaceCode("sed without a script is not understood")
        scripts.append(operands.pop(0))
    writes: list[str] = []
    for text in scripts:
        _inline(sed_runs_programs(text, writes), "sed")
    for target in writes:
        checker.not_onto_grading(target, "sed's w command")
    if in_place:
        for operand in operands:
            checker.not_onto_grading(operand, "sed -i")


def _inline(reason: str | None, name: str) -> None:
    if reason is not None:
        raise WorkspaceCode(f"{reason}; {name} in a check may only read")


def file_option(checker: Checker, name: str, args: Sequence[str], options: tuple[str, ...]) -> None:
    """Each value of ``options`` (``-f FILE``, ``-fFILE``, ``--file=FILE``) is code."""
    for i, arg in enumerate(args):
        for option in options:
            if arg == option and i + 1 < len(args):
                checker.script(args[i + 1], f"the program file given to {name} {option}")
            elif arg.startswith(option + "=") or (
                len(option) == 2 and arg.startswith(option) and len(arg) > 2
            ):
                checker.script(arg[len(option) :].lstrip("="), f"the program file given to {name}")


def base(program: str) -> str:
    return posixpath.basename(program)
