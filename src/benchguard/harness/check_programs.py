"""What a command check runs: refusing a check that would run a workspace file as code.

A check is the grader. When its argv executes a file the agent could have written (a
``./run.sh``, the script given to ``sh``/``python``/``node``/``perl``, the test files
given to a test runner, a ``Makefile`` for ``make``), the agent decides the verdict. So
such a check is refused when the task is loaded, unless the file is one of the task's
declared grading files (copied into the grading box from the task folder, never from
the workspace). Reading a workspace file as data stays allowed (``grep -q 137
answer.txt``, ``python3 -m json.tool answer.json``, ``diff expected out``).

The argv is read the way the program reads it: options are parsed per program family
(``program_options``), a ``sh -c`` string is split by ``shell_words`` (quote-aware,
so an unquoted ``$``, glob or brace is known to change the word when it runs) into
simple commands, each read the same way, its builtins included (``source``, ``.``,
``trap``'s action, ``exec``, ``command``). Whatever cannot be read with certainty fails
closed: an option a family does not know, a command substitution, a here-document,
``cd`` or ``eval``, a program or script operand the shell would still expand, an
interpreter left to read its program from standard input (``sh < run.sh``), a change
to a variable that says where programs or code are found (``PATH=.:$PATH``,
``PYTHONPATH``, ``LD_PRELOAD``, ``BASH_ENV``, ...), an option that names a program
(``tar -I``, ``find -exec``, ``git -c``), and the wrappers and interpreters not
modelled (``sudo``, ``flock``, ``java``, ``gcc``, ...).

Extraction is a write whose names the check cannot know (``tar -x``, ``unzip`` of the
agent's archive, over the grading files): refused unless to standard output or an
absolute directory. Inline code is read for what it loads and writes
(``harness.inline_code``: ``python3 -c`` by its syntax tree, ``node -e`` by its words,
``sqlite3``'s SQL for dot-commands), as are awk programs and sed scripts
(``script_texts``: ``system``, pipes, gawk's indirect calls, ``print >``, sed's ``e``).

Diffs and archives applied over the box, the dynamic loader, ``cmake``, ``openssl``'s
engines and package installers are read by ``program_writers``, as are the programs
that write a file an option or operand names (``pandoc -o``, ``xsltproc -o``,
``objcopy``, ``tidy -m``, ``openssl -out``, ``gpg -o``, ``uudecode``, ``tar -cf``,
``touch``, ``zip``, ``curl -o``), which may not write onto a grading file; linters and formatters
that find a config naming code in the working directory (mypy's plugins, pylint's
init-hook, eslint's JavaScript config) by ``config_tools``: refused unless the config
is pinned to a grading file.

What it cannot see: a program it does not know is assumed to read its operands as
data unless an operand is named like a script or program (``mytool run.sh``: refused,
fail closed), so ``mytool prog`` where ``mytool`` runs ``prog`` is missed. Inline code
is read for python, node, perl (by perl itself, ``perl_code``) and sqlite3; ruby, php,
lua and R inline code is refused unread. Bounds: :data:`MAX_WORDS` words,
:data:`MAX_CHARS` characters, :data:`MAX_DEPTH` levels of nesting.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from benchguard.harness import config_tools
from benchguard.harness import program_options as options
from benchguard.harness import program_writers as writers
from benchguard.harness.program_options import (
    PERL_RE,
    PYTEST_VALUED,
    PYTHON_RE,
    WorkspaceCode,
    split_pytest,
)
from benchguard.harness.shell_words import REDIRECTS, ShellSyntax, Word, split

__all__ = [
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_WORDS",
    "PYTEST_PROGRAMS",
    "PYTEST_VALUED",
    "GradingPaths",
    "PytestRun",
    "WorkspaceCode",
    "check_command",
    "normalise",
    "pytest_run",
]

MAX_WORDS = 512
MAX_CHARS = 16_384
MAX_DEPTH = 8

_SHELL_FLAGS = set("abefhkmnptuvxBCEHPTr")
_SHELL_LONG = {"--norc", "--noprofile", "--posix", "--noediting", "--restricted"}
_SHELL_LONG |= {"--verbose", "--help", "--version"}
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh"}
_NODES = {"node", "nodejs"}
_AWKS = {"awk", "gawk", "mawk", "nawk", "busybox-awk"}
# Names that start like an interpreter but are not the one modelled (python3-dbg,
# pypy3, node18): refused rather than read as data.
_INTERPRETER_STEMS = ("python", "pypy", "perl", "node", "ruby", "php", "lua", "tcl")
# Wrappers that run their operand as a command: (options taking a value).
_WRAPPERS: dict[str, set[str]] = {
    "nice": {"-n", "--adjustment"},
    "nohup": set(),
    "setsid": set(),
    "stdbuf": {"-i", "-o", "-e"},
    "time": {"-f", "-o", "--format", "--output"},
    "ionice": {"-c", "-n", "-p", "--class", "--classdata"},
    "busybox": set(),
    "builtin": set(),
    "coproc": set(),
}
_TIMEOUT_VALUE = {"-s", "-k", "--signal", "--kill-after"}
_XARGS_VALUE = {"-d", "-E", "-I", "-L", "-n", "-P", "-s", "--delimiter", "--max-args"}
_XARGS_VALUE |= {"--max-procs", "--max-chars", "--max-lines", "--replace", "--eof"}
# Programs that start another program named by an operand or option, in ways not
# modelled here: refused, with the program named (fail closed).
_PROGRAM_RUNNERS = {
    "sudo", "doas", "su", "runuser", "pkexec", "sg", "newgrp", "chroot", "flock",
    "unshare", "nsenter", "setpriv", "prlimit", "taskset", "chrt", "numactl", "strace",
    "ltrace", "gdb", "valgrind", "perf", "script", "expect", "parallel", "watch",
    "run-parts", "xvfb-run", "faketime", "fakeroot", "proot", "rlwrap", "unbuffer",
    "systemd-run", "bwrap", "firejail", "docker", "podman", "ssh", "at", "batch",
    "dbus-run-session", "setarch", "linux32", "linux64", "catchsegv", "entr",
    "tmux", "screen", "su-exec", "gosu", "chpst", "daemonize", "start-stop-daemon",
    "eatmydata", "nocache", "torsocks", "proxychains", "proxychains4", "trickle",
    "ccache", "mpirun", "mpiexec", "srun", "cpulimit", "chronic", "sem", "ifne",
    "rsync", "scp", "sftp", "hg", "svn", "fc",
}  # fmt: skip
# Words in an unknown program's option names that say the option names a program
# (sort --compress-program, sdiff --diff-program, --pager=, --exec=): refused.
_PROGRAM_OPTION = re.compile(r"program|command|exec|script|shell|pager|editor|hook|plugin|load")
# Interpreters and compilers not modelled: each runs or builds its operands as code.
_CODE_RUNNERS = {
    "csh", "tcsh", "fish", "elvish", "nu", "pwsh", "osh", "rc", "es", "guile",
    "racket", "julia", "R", "octave", "java", "javac", "jshell", "gcc", "cc", "c++",
    "g++", "clang", "clang++", "tcc", "rustc", "deno", "bun", "ts-node", "tsx",
    "ipython", "jupyter", "sbcl", "clisp", "ghc", "runghc", "runhaskell", "stack",
    "swift", "kotlin", "scala", "groovy", "elixir", "erl", "escript", "luajit", "m4",
    "dc", "ed", "ex", "vi", "vim", "nvim", "emacs", "gdb", "osascript", "dart", "ocaml",
    "ocamlrun", "gnuplot", "xonsh", "ion", "irb", "crystal", "nim", "zig", "gleam",
    "sage", "maxima", "gp", "wolframscript", "matlab", "busybox", "toybox",
}  # fmt: skip
# Test runners other than pytest: refused (a pass needs the runner's own report, which
# the grading box reads for pytest only), with the runner named.
_OTHER_RUNNERS = {
    "jest", "mocha", "vitest", "ava", "tap", "prove", "bats", "tox", "nox",
    "nosetests", "nose2", "trial", "phpunit", "rspec", "npm", "npx", "yarn", "pnpm",
    "cargo", "go", "mvn", "gradle", "ctest", "pip", "pip3", "uv", "poetry", "pipx",
    # Build tools: each runs the build file it finds in the working directory.
    "ninja", "bazel", "bazelisk", "dotnet", "scons", "meson", "just", "rake", "ant",
    "sbt", "lein", "mix", "invoke", "task", "waf", "buck", "pants", "earthly",
}  # fmt: skip
PYTEST_PROGRAMS = {"pytest", "py.test"}
# NAME=, NAME+= and NAME[i]= all assign (PATH+=:. and PATH[0]=. set PATH).
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
# Variables that say where programs, code or startup files are found, or which
# options a program takes from the environment: a check may not set or unset them
# (PATH only to absolute directories, and $PATH itself).
_PROTECTED = re.compile(
    r"(LD_|PYTHON|PERL|RUBY|NODE_|NPM_|GIT_|BASH|PYTEST_|TAR_|AWK|ZDOT|LESS|JAVA|"
    r"GCONV_|MAKE|DYLD_|PYLINT|COVERAGE|MYPY|ESLINT|PRETTIER)\w*|ENV|HOME|XDG_CONFIG_HOME|XDG_DATA_HOME|SHELLOPTS|"
    r"PROMPT_COMMAND|PS4|IFS|CDPATH|GZIP|XZ_OPT|BZIP2?|ZSTD_CLEVEL|PAGER|EDITOR|"
    r"VISUAL|MANPAGER|TERMINFO|GLOBIGNORE|FPATH|SQLITE_HISTORY|CLASSPATH|GEM_\w*|"
    r"PIP_\w*|MAKEFILES|TMPDIR|OPENSSL_\w*|GNUPGHOME|HTML_TIDY|TAPE|CURL_HOME|"
    r"XML_CATALOG_FILES|SGML_CATALOG_FILES"
)
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "\n", "|&", ";;", ";&", ";;&"}
_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "fi", "done", "esac"}
_KEYWORDS |= {"{", "}", "!"}
# Commands a shell string may hold whose words are all data (loops, tests).
_SKIPPED_COMMANDS = {"for", "select", "case", "[[", "[", "test"}
# Programs known to read every operand as data: the only ones a word the shell
# expands from a variable ("$f", $'...') may be given to, since that word could be
# any option (o=--to-command=./x; tar $o -xf a.tar). Interpreters are read apart:
# their parsers stop at the script, and refuse an unknown word before it.
_DATA_TOOLS = {
    "grep", "egrep", "fgrep", "test", "[", "[[", "cat", "wc", "head", "tail", "diff",
    "cmp", "echo", "printf", "true", "false", "exit", "return", "uniq", "cut", "tr",
    "ls", "stat", "du", "md5sum", "sha1sum", "sha256sum", "basename", "dirname",
    "realpath", "readlink", "expr", "seq", "rm", "mkdir", "touch", "shift", "set",
}  # fmt: skip
# Programs that write to their operands (dd: of=), or remove them (rm grade.py, then
# any program creating it): none may target a grading path.
# (patch and cpio are read apart: their input names what they write.)
_WRITERS = {"cp", "mv", "ln", "install", "tee", "dd", "truncate"}
_WRITERS |= {"link", "rename", "shred", "rm", "unlink", "rmdir"}
# Options of the writers that name their target directory in the same word.
_TARGET_OPTIONS = ("--target-directory=", "--target=", "-t")
# Operands an unknown program may run: a file named like a script or a program text.
_SCRIPT_SUFFIX = re.compile(
    r"\.(sh|bash|zsh|ksh|py|pyc|pyz|pth|js|mjs|cjs|ts|pl|pm|rb|php|lua|tcl|awk|sed|mk|"
    r"r|jl|so|jar|wasm|ps1|bat|cmd|exe|xsl|xslt)$",
    re.IGNORECASE,
)
# Shell builtins read by builtin() (their operands are names or data).
_BUILTINS = {"cd", "pushd", "popd", "eval", "alias", "enable", "hash", "source", ".", "trap"}
_BUILTINS |= {"exec", "command", "export", "declare", "typeset", "local", "readonly", "read"}
_BUILTINS |= {"mapfile", "readarray", "getopts", "printf", "wait", "unset", "type", "umask"}
# A word in program or script position may hold none of these.
_UNFIXED = set("$`*?[]{}~\\\0")


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
    elif PYTHON_RE.match(name) and len(command) >= 3 and command[1:3] == ["-m", "pytest"]:
        rest = list(command[3:])
    elif PYTHON_RE.match(name) and len(command) >= 2 and command[1] == "-mpytest":
        rest = list(command[2:])
    else:
        return None
    opts, operands = split_pytest(rest)
    return PytestRun(tuple(t for option in opts for t in option), tuple(operands))


def check_command(command: Sequence[str], grading: GradingPaths) -> None:
    """Raise :class:`WorkspaceCode` when ``command`` would run a non-grading file."""
    words = list(command)
    if len(words) > MAX_WORDS:
        raise WorkspaceCode(f"the command has {len(words)} words; at most {MAX_WORDS} are read")
    chars = sum(len(w) for w in words)
    if chars > MAX_CHARS:
        raise WorkspaceCode(f"the command has {chars} characters; at most {MAX_CHARS} are read")
    _Reader(grading).argv([Word(w) for w in words], depth=0)


# A stand-in for an operand the check cannot know (a name find or xargs supplies).
_UNKNOWN = Word("{}", expands=True)


class _Reader:
    def __init__(self, grading: GradingPaths) -> None:
        self.grading = grading

    def not_onto_grading(self, target: str, what: str) -> None:
        """Refuse a write whose target is a grading file or a folder holding one: the
        check would replace the task's grader with whatever it copies there
        (``cp answer.txt grade.py && python3 grade.py``)."""
        if target.startswith("/") or target.startswith("-"):
            return
        if getattr(target, "expands", False) or any(c in _UNFIXED for c in target):
            raise WorkspaceCode(f"{what} writes to {target!r}, which is not a fixed path")
        path = normalise(target)
        entries = [normalise(e) for e in self.grading.entries]
        if (
            path is None
            or self.grading.covers(target)
            or any(e is not None and e.startswith(path + "/") for e in entries)
        ):
            raise WorkspaceCode(
                f"{what} writes to {target!r}, over the task's grading files, so what "
                "grades the run would be the check's copy"
            )

    def covered(self, operand: str) -> bool:
        return self.grading.covers(operand)

    def script(self, operand: str, what: str) -> None:
        if getattr(operand, "expands", False) or any(c in _UNFIXED for c in operand):
            raise WorkspaceCode(f"{what} {operand!r} is not a fixed path, so it cannot be checked")
        if operand.startswith("/"):
            if operand.startswith(("/proc/", "/dev/")) or "/.." in operand:
                # /proc/self/cwd/run.sh, /dev/fd/3, /dev/stdin: the workspace again.
                raise WorkspaceCode(f"{what} {operand!r} can name a workspace file")
            return  # a system or operator path; the box's own place is never known
        if not self.grading.covers(operand):
            raise WorkspaceCode(
                f"{what} {operand!r} would come from the agent's workspace; list it under "
                "grading_files so the box runs the task's own copy"
            )

    def assignment(self, word: str, where: str) -> None:
        target, _, value = word.partition("=")
        found = _ASSIGNMENT.match(word)
        if found is None:
            raise WorkspaceCode(f"{where} sets {target!r}, which is not a variable name")
        name = found.group(1)
        if name == "PATH":
            for entry in value.split(":"):
                if entry in ("$PATH", "${PATH}"):
                    continue
                # An expansion in the word can only be $PATH's: any other is refused.
                if (
                    not entry.startswith("/")
                    or entry.startswith(("/proc", "/dev"))
                    or "/.." in entry
                    or any(c in _UNFIXED for c in entry)
                ):
                    raise WorkspaceCode(
                        f"{where} puts {entry or '(empty: the working directory)'!r} on PATH; "
                        "only absolute directories may be added"
                    )
            return
        if _PROTECTED.fullmatch(name):
            raise WorkspaceCode(
                f"{where} sets {name}, which decides where programs or code are found"
            )

    def argv(self, words: list[Word], *, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise WorkspaceCode("the command nests wrappers too deeply to be read")
        while words and _ASSIGNMENT.match(words[0]):
            self.assignment(words[0], "the command")
            words = words[1:]
        if not words:
            return
        program, args = words[0], words[1:]
        if program in _SKIPPED_COMMANDS:
            return
        if program == "function":
            # bash's ``function NAME [()] { BODY; }``: the body's first command shares
            # this simple command's words (function f { ./x; }), so it is read.
            body = args[1:]
            while body and (body[0] in _KEYWORDS or body[0] in ("()", "(", ")")):
                body = body[1:]
            self.argv(body, depth=depth)
            return
        if program.startswith("-"):
            raise WorkspaceCode(f"the program {program!r} is not understood")
        if getattr(program, "expands", False) or any(c in _UNFIXED for c in program):
            raise WorkspaceCode(f"the program {program!r} is not a fixed name")
        if "/" in program:
            self.script(program, "the program")
        name = posixpath.basename(program)
        if name not in _DATA_TOOLS and not self.interpreter(name):
            for arg in args:
                if getattr(arg, "params", False):
                    raise WorkspaceCode(
                        f"the word {arg!r} is expanded when it runs and may become any "
                        f"option of {name}; only data tools may take one"
                    )
        self.program(name, args, depth)

    @staticmethod
    def interpreter(name: str) -> bool:
        return (
            name in _SHELLS
            or name in _NODES
            or name == "ruby"
            or bool(PYTHON_RE.match(name) or PERL_RE.match(name))
            or options.is_simple_interpreter(name)
        )

    def program(self, name: str, args: list[Word], depth: int) -> None:
        if name in _SHELLS:
            self.shell(name, args, depth)
        elif PYTHON_RE.match(name):
            module = options.python(self, args)
            if module is not None and module[0] in PYTEST_PROGRAMS:
                options.pytest(self, module[1])
            elif module is not None and module[0] in config_tools.MODULES:
                config_tools.read(self, config_tools.MODULES[module[0]], module[1])
            elif module is not None:
                options.python_module(self, *module)
        elif name in _NODES:
            options.node(self, args)
        elif PERL_RE.match(name):
            options.perl(self, args)
        elif name == "ruby":
            options.ruby(self, args)
        elif options.is_simple_interpreter(name):
            options.simple_interpreter(self, name, args)
        elif name in PYTEST_PROGRAMS:
            options.pytest(self, args)
        elif name in _OTHER_RUNNERS:
            raise WorkspaceCode(
                f"{name!r} runs the workspace's own tests or scripts; use pytest on grading "
                "files (its JUnit report is what a pass needs)"
            )
        elif name in _PROGRAM_RUNNERS or name in _CODE_RUNNERS:
            raise WorkspaceCode(
                f"{name!r} runs its operands as a program in ways not modelled here, so "
                "what it runs cannot be checked"
            )
        elif name.startswith(_INTERPRETER_STEMS) and name not in ("perldoc",):
            raise WorkspaceCode(f"the interpreter {name!r} is not modelled, so it is refused")
        else:
            self.tool(name, args, depth)

    def tool(self, name: str, args: list[Word], depth: int) -> None:
        if name == "env":
            self.env(args, depth)
        elif name == "timeout":
            self.wrapped(args, _TIMEOUT_VALUE, depth, skip_operands=1)
        elif name in _WRAPPERS:
            self.wrapped(args, _WRAPPERS[name], depth)
        elif name == "xargs":
            if any(a in ("-a", "--arg-file") or a.startswith("--arg-file=") for a in args):
                raise WorkspaceCode("xargs -a reads its arguments from a file")
            # xargs appends the names it reads: an interpreter it completes has no
            # script in the argv read here, which the standard-input rule refuses.
            self.wrapped(args, _XARGS_VALUE, depth)
        elif name in _AWKS:
            options.awk(self, name, args)
        elif name == "sed":
            options.sed(self, args)
        elif name == "jq":
            options.file_option(self, name, args, ("-f", "--from-file", "-L"))
        elif name in ("make", "gmake"):
            options.make(self, args)
        elif name in _WRITERS:
            for arg in args:
                if name == "dd" and arg.startswith("of="):
                    self.not_onto_grading(arg[3:], name)
                elif name != "dd" and not arg.startswith("-"):
                    self.not_onto_grading(arg, name)
                elif name != "dd" and arg.startswith(_TARGET_OPTIONS) and arg != "-t":
                    # cp -r --target-directory=. ws: the target is in the option's word.
                    option = next(o for o in _TARGET_OPTIONS if arg.startswith(o))
                    self.not_onto_grading(arg[len(option) :], f"{name} {option.rstrip('=')}")
        elif name in ("tar", "bsdtar", "gtar"):
            options.tar(self, args)
            writers.tar_archive(self, args)
        elif name in config_tools.RULES or name in config_tools.REFUSED:
            config_tools.read(self, name, args)
        elif name == "patch":
            writers.patch(self, args)
        elif name in writers.DECOMPRESSORS:
            writers.decompressor(self, name, args)
        elif name == "cpio":
            writers.cpio(self, args)
        elif name in ("7z", "7za", "7zr", "unrar", "ar", "pax"):
            writers.archive_tool(name, args)
        elif name in writers.EXTRACTORS:
            writers.extractor(name)
        elif name in writers.INSTALLERS:
            writers.installer(name)
        elif name == "dpkg":
            writers.dpkg(self, args)
        elif writers.LOADER_RE.match(name):
            writers.loader(self, name, args)
        elif name == "ldd":
            writers.ldd(self, args)
        elif name == "cmake":
            writers.cmake(self, args)
        elif name == "openssl":
            writers.openssl(self, args)
        elif name == "unzip":
            options.unzip(self, args)
        elif name == "sqlite3":
            options.sqlite3(self, args)
        elif name == "find":
            self.find(args, depth)
        elif name == "git":
            raise WorkspaceCode(
                "git reads the workspace's .git/config, which can name programs to run "
                "(core.fsmonitor, core.pager)"
            )
        else:
            self.builtin(name, args, depth)
            if name == "sort":
                self.sort_output(args)
            writers.output_files(self, name, args)
            if name not in _BUILTINS and name not in _DATA_TOOLS:
                self.unknown_program(name, args)
            for arg in args:
                option = arg.lstrip("-").split("=", 1)[0].lower()
                if arg.startswith("-") and len(option) > 2 and _PROGRAM_OPTION.search(option):
                    raise WorkspaceCode(
                        f"{name} {arg.split('=', 1)[0]} looks like an option naming a program "
                        "to run, so what it runs cannot be checked"
                    )

    def sort_output(self, args: list[Word]) -> None:
        """sort -o FILE writes FILE (sort -o grade.py answer.txt replaces the grader)."""
        for i, arg in enumerate(args):
            if arg == "--":
                return
            if arg in ("-o", "--output"):
                self.not_onto_grading(args[i + 1] if i + 1 < len(args) else "", "sort -o")
            elif arg.startswith("--output="):
                self.not_onto_grading(arg.partition("=")[2], "sort --output")
            elif arg.startswith("-") and not arg.startswith("--") and "o" in arg:
                rest = arg[arg.index("o") + 1 :]
                target = rest or (args[i + 1] if i + 1 < len(args) else "")
                self.not_onto_grading(target, "sort -o")

    def unknown_program(self, name: str, args: list[Word]) -> None:
        """A program this reader does not model is assumed to read its operands as
        data (jq, xmllint, file, sort), except one named like a script or program
        (``runner run.sh``, ``mytool plugin.so``): that may be what it runs, so it is
        refused unless it is a grading file. A script without such a name given to an
        unknown program is not seen (docs/harness.md says so)."""
        for arg in args:
            value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
            if value.startswith("-") or not _SCRIPT_SUFFIX.search(value):
                continue
            if value.startswith("/") and not value.startswith(("/proc/", "/dev/")):
                continue  # a system or operator file, never the workspace's
            if not self.covered(value):
                raise WorkspaceCode(
                    f"{name!r} is not a program this reader knows, and {value!r} is named "
                    "like a script or program it may run, from the agent's workspace; "
                    "list it under grading_files, or use a modelled interpreter"
                )

    def builtin(self, name: str, args: list[Word], depth: int) -> None:
        if name in ("cd", "pushd", "popd"):
            raise WorkspaceCode(
                f"the check changes directory ({name}), so the paths after it cannot be checked"
            )
        if name in ("eval", "alias", "enable", "hash"):
            raise WorkspaceCode(f"the shell builtin {name} makes what runs unreadable here")
        if name in ("source", "."):
            operands = [a for a in args if a != "--"]
            if not operands:
                raise WorkspaceCode(f"{name} without a file is not understood")
            self.script(operands[0], f"the file given to {name}")
        elif name == "trap":
            operands = [a for a in args if a not in ("--", "-p", "-l", "-P")]
            if operands and operands[0] != "-" and operands[0]:
                if getattr(operands[0], "expands", False):
                    raise WorkspaceCode(f"the trap action {operands[0]!r} is not fixed")
                self.shell_string(operands[0], depth)
        elif name == "exec":
            i = 0
            while i < len(args) and args[i].startswith("-") and args[i] != "--":
                if args[i] not in ("-a", "-c"):
                    raise WorkspaceCode(f"the exec option {args[i]!r} is not understood")
                i += 2 if args[i] == "-a" else 1
            self.argv(args[i + (i < len(args) and args[i] == "--") :], depth=depth + 1)
        elif name == "command":
            i = 0
            while i < len(args) and args[i] in ("-p", "-v", "-V"):
                if args[i] in ("-v", "-V"):
                    return  # only prints how a name resolves
                i += 1
            self.argv(args[i:], depth=depth + 1)
        elif name in ("export", "declare", "typeset", "local", "readonly"):
            for arg in args:
                if arg.startswith("-") and "n" in arg:
                    raise WorkspaceCode(f"{name} {arg} makes a name refer to another variable")
                if "=" in arg and not arg.startswith("-"):
                    self.assignment(arg, f"{name} in the check")
        elif name in ("read", "mapfile", "readarray", "getopts", "printf", "wait"):
            # Each can assign a variable from data (read PATH < path.txt, printf -v):
            # read's names are its operands, printf's and wait's follow -v and -p.
            named = args if name not in ("printf", "wait") else args[1:2]
            if name in ("printf", "wait") and (not args or args[0] not in ("-v", "-p")):
                named = []
            for arg in named:
                bare = arg.split("[", 1)[0]
                if bare == "PATH" or _PROTECTED.fullmatch(bare):
                    raise WorkspaceCode(f"{name} in the check may set {bare}")
        elif name == "unset":
            for arg in args:
                if (not arg.startswith("-") and _PROTECTED.fullmatch(arg)) or arg == "PATH":
                    raise WorkspaceCode(f"the check unsets {arg}, which keeps workspace code out")

    def shell(self, name: str, args: list[Word], depth: int) -> None:
        command_string = False
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                i += 1
                break
            if arg in ("--rcfile", "--init-file"):
                if i + 1 < len(args):
                    self.script(args[i + 1], f"the file given to {arg}")
                i += 2
                continue
            if arg in ("--login", "--interactive"):
                raise WorkspaceCode(f"{name} {arg} reads the home's startup files")
            if arg in _SHELL_LONG:
                i += 1
                continue
            if arg[:1] in ("-", "+") and len(arg) > 1 and not arg.startswith("--"):
                letters = arg[1:]
                for j, letter in enumerate(letters):
                    if letter == "c":
                        command_string = True
                    elif letter in "oO":
                        if j != len(letters) - 1:
                            raise WorkspaceCode(f"the shell option {arg!r} is not understood")
                        i += 1  # its value is the next word
                    elif letter in "li":
                        raise WorkspaceCode(
                            f"{name} -{letter} reads the home's startup files "
                            "(~/.profile, ~/.bashrc), which the agent could have written"
                        )
                    elif letter == "s":
                        raise options.WorkspaceCode(
                            f"{name} -s reads its script from standard input, which a "
                            "redirection or pipe can fill with a workspace file"
                        )
                    elif letter not in _SHELL_FLAGS:
                        raise WorkspaceCode(f"the shell option {arg!r} is not understood")
                i += 1
                continue
            if arg.startswith("-") and len(arg) > 1:
                raise WorkspaceCode(f"the shell option {arg!r} is not understood")
            break
        if name == "zsh" and not any(a.startswith("-") and "f" in a for a in args[:i]):
            raise WorkspaceCode("zsh reads ~/.zshenv from the home; give -f")
        if i >= len(args):
            if command_string:
                raise WorkspaceCode(f"{name} -c without a command string")
            raise WorkspaceCode(
                f"{name} would read its script from standard input, which a redirection "
                "or pipe can fill with a workspace file; give it with -c or a grading file"
            )
        if command_string:
            if getattr(args[i], "expands", False):
                raise WorkspaceCode(f"the shell string {args[i]!r} is built when it runs")
            self.shell_string(args[i], depth)
        else:
            self.script(args[i], "the script given to the shell")

    def shell_string(self, text: str, depth: int) -> None:
        if depth >= MAX_DEPTH:
            raise WorkspaceCode("the command nests shell strings too deeply to be read")
        try:
            tokens = split(text)
        except ShellSyntax as exc:
            raise WorkspaceCode(f"the shell string cannot be read: {exc}") from None
        command: list[Word] = []
        skip_next = ""
        for token in [*tokens, None]:
            if skip_next:
                if token is None or token.kind != "word":
                    raise WorkspaceCode("a redirection in the shell string names no file")
                if skip_next not in ("<", "<&", "<<<"):
                    self.not_onto_grading(token.word or token.text, f"the redirection {skip_next}")
                skip_next = ""
                continue
            if token is None or (token.kind == "op" and token.text in _SEPARATORS):
                self.simple_command(command, depth)
                command = []
                continue
            if token.kind == "op" and token.text in REDIRECTS:
                skip_next = token.text  # its file is data: no interpreter reads stdin here
                continue
            assert token.word is not None
            if token.word.braces:
                raise WorkspaceCode(
                    f"the word {token.word!r} is brace-expanded when it runs, into words "
                    "that cannot be read here"
                )
            if not command and token.word in _KEYWORDS and not token.word.expands:
                continue
            command.append(token.word)

    def simple_command(self, words: list[Word], depth: int) -> None:
        self.argv(words, depth=depth + 1)

    def env(self, args: list[Word], depth: int) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-0", "--null", "-v", "--debug"):
                i += 1
            elif arg in ("-i", "--ignore-environment", "-") or arg.startswith(("-u", "--unset")):
                raise WorkspaceCode(
                    f"env {arg} removes variables the grading box sets to keep workspace "
                    "code out (PYTHONSAFEPATH, PATH)"
                )
            elif arg in ("-C", "--chdir") or arg.startswith(("-C", "--chdir=")):
                raise WorkspaceCode(
                    "env -C changes directory, so the paths after it cannot be checked"
                )
            elif arg in ("-S", "--split-string") or arg.startswith(("-S", "--split-string=")):
                text = arg.partition("=")[2] if arg.startswith("--") else arg[2:]
                if not text:
                    text = args[i + 1] if i + 1 < len(args) else ""
                if "$" in text or "\\" in text or getattr(text, "expands", False):
                    raise WorkspaceCode("env -S with variables or escapes is not read here")
                try:
                    split_words = shlex.split(text)
                except ValueError as exc:
                    raise WorkspaceCode(f"env -S cannot be read ({exc})") from None
                self.argv([Word(w) for w in split_words], depth=depth + 1)
                return
            elif arg == "--":
                self.argv(args[i + 1 :], depth=depth + 1)
                return
            elif arg.startswith("-"):
                raise WorkspaceCode(f"the env option {arg!r} is not understood")
            elif "=" in arg:
                self.assignment(arg, "env")
                i += 1
            else:
                self.argv(args[i:], depth=depth + 1)
                return

    def wrapped(
        self, args: list[Word], valued: set[str], depth: int, *, skip_operands: int = 0
    ) -> None:
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] != "--":
            i += 2 if args[i] in valued else 1
        if i < len(args) and args[i] == "--":
            i += 1
        self.argv(args[i + skip_operands :], depth=depth + 1)

    def find(self, args: list[Word], depth: int) -> None:
        """find -exec/-execdir/-ok/-okdir runs its command, with ``{}`` a found name;
        -fprint, -fprint0, -fprintf and -fls write the names to a file."""
        i = 0
        while i < len(args):
            if args[i] in ("-fprint", "-fprint0", "-fprintf", "-fls"):
                # find . -fprint grade.py && sh grade.py runs the names it found.
                target = args[i + 1] if i + 1 < len(args) else ""
                self.not_onto_grading(target, f"find {args[i]}")
            elif args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
                end = i + 1
                while end < len(args) and args[end] not in (";", "+"):
                    end += 1
                inner = [_UNKNOWN if "{}" in a else a for a in args[i + 1 : end]]
                if not inner or inner[0] is _UNKNOWN:
                    raise WorkspaceCode(f"find {args[i]} runs the files it finds")
                self.argv(inner, depth=depth + 1)
                i = end
            i += 1
