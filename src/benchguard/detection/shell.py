"""Shell-aware reading of what an agent typed: the paths a command really names.

A model that knows it is watched never spells ``~/devops-bench/controls`` plainly: it
quotes pieces (``~/dev"ops"-bench``), splits lines (``contr\\<newline>ols``), uses
braces, ``~agent``, ``$HOME``, the literal home path, ``./`` and ``//``, variables it
set a moment ago, ``/proc/self/cwd``, ``cd`` one level per call, base64 or hex that a
pipe decodes. :class:`ShellReader` undoes what a shell would undo and returns the
*canonical* words: every path made absolute against the tracked working directory,
normalised, and spelled ``~/...`` when it is inside the home, plus any text decoded
from a base64, hex or ``\\xNN`` blob the command carries. Rules then match one
spelling.

What it cannot see: a path computed by a program from data the transcript never shows
(an interpreter reading a file the agent wrote earlier through hidden means, network
input); command substitutions are not executed, only their literal parts and decodable
blobs are read. Those are left to the sandbox and the system audit.

Bounded: commands longer than :data:`MAX_COMMAND_CHARS` are read up to that length,
brace expansion stops at :data:`MAX_BRACE_WORDS` words, decoding at
:data:`MAX_DECODED_CHARS` characters.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import fnmatch
import itertools
import posixpath
import re
import shlex
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from benchguard.detection._script_memo import StateMemo
from benchguard.detection.archive_members import archive_reach
from benchguard.detection.code_paths import code_paths, inline_hinted
from benchguard.detection.glob_reach import find_reach, glob_reach, walk_reach
from benchguard.detection.program_paths import python_hinted, read_python
from benchguard.detection.write_surfaces import write_views

MAX_COMMAND_CHARS = 20_000
MAX_BRACE_WORDS = 64
MAX_DECODED_CHARS = 4096
MAX_WORDS = 2_000
MAX_GLOB_MATCHES = 32
MAX_VARIABLES = 64
MAX_VARIABLE_CHARS = 1024
MAX_SCRIPTS = 16
MAX_SCRIPT_CHARS = 64 * 1024

T = TypeVar("T")
# Words before an assignment that keep it an assignment (``export D=...``).
_DECLARE = frozenset({"export", "declare", "local", "readonly", "typeset"})
# Command substitutions a shell would evaluate to a path: ``$(printf FMT ARGS)`` and
# ``$(echo WORD | rev)`` (the reversed spelling of a path).
_PRINTF_SUB = re.compile(r"\$\(\s*printf\s+([^()`\n]{1,400})\)|`\s*printf\s+([^()`\n]{1,400})`")
_PRINTF_SPEC = re.compile(r"%(?:%|s|b|q|d)")
# A literal piped through transforms: ``echo WORD | tr a-z n-za-m | rev``, in a
# substitution or handed on to ``xargs CMD`` / ``sh``. Each transform is undone in order.
_TRANSFORM = (
    r"(?:rev|tr\s+(?:'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|[^\s|)]{1,80})\s+"
    r"(?:'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|[^\s|)]{1,80})"
    r"|base64\s+(?:-d|--decode|-D)|base32\s+(?:-d|--decode)|xxd\s+-r\s+-p|xxd\s+-p\s+-r)"
)
_LITERAL_SOURCE = (
    r"(?:echo|printf\s+(?:'%s'|\"%s\"|%s))\s+(?:-[ne]{1,2}\s+)?"
    r"(?P<q>['\"]?)(?P<word>[^\s'\"()|`]{3,400})(?P=q)"
)
_PIPE_SUB = re.compile(
    r"\$\(\s*" + _LITERAL_SOURCE + r"(?P<chain>(?:\s*\|\s*" + _TRANSFORM + r")+)\s*\)"
    r"|`\s*"
    + _LITERAL_SOURCE.replace("?P<q>", "?P<q2>")
    .replace("?P=q", "?P=q2")
    .replace("?P<word>", "?P<word2>")
    + r"(?P<chain2>(?:\s*\|\s*"
    + _TRANSFORM
    + r")+)\s*`"
)
_PIPE_ON = re.compile(
    _LITERAL_SOURCE + r"(?P<chain>(?:\s*\|\s*" + _TRANSFORM + r")+)\s*\|\s*"
    r"(?P<sink>xargs(?:\s+-[^\s]+)*\s+[^|;&\n]{1,200}|(?:ba|z|da)?sh\b)"
)
_ONE_TRANSFORM = re.compile(_TRANSFORM)

_CONTINUATION = re.compile(r"\\\r?\n")
_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_VAR = re.compile(
    r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*|[0-9])\}|([A-Za-z_][A-Za-z0-9_]*|\$|[0-9]))"
    # ``${name[i]}``, ``${name:off:len}``, ``${name#pat}``, ``${name/a/b}``, ``${name^^}``,
    # ``${name:-default}``: group 3 the name, 4 an index, 5 the operator and argument.
    r"|\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9])(\[[^\]{}]{1,12}\])?([:#%/^,+=-][^{}]{0,200})?\}"
)
# ``name=(a b c)``: a bash array, kept as ``name[0]``... (and ``name`` its first item).
_ARRAY = re.compile(r"(?:^|(?<=[\s;&|(]))([A-Za-z_]\w{0,40})=\(([^()\n]{0,400})\)")
# ``set -- a b``: the positional parameters.
# Words after which a command starts (``while read d``, ``do for x in ...``).
_KEYWORDS = frozenset({"do", "then", "else", "while", "until", "if", "!", "time"})
# ``echo VALUE > FILE`` (or printf): a value kept in a file for a later ``$(cat FILE)``.
_VALUE_WRITE = re.compile(
    r"(?:^|(?<=[;&|\n]))\s*(?:echo|printf(?:\s+['\"]?%s(?:\\n)?['\"]?)?)\s+(?:-[ne]{1,2}\s+)?"
    r"(?P<q>['\"]?)(?P<value>[^'\"\n;|&<>]{1,400})(?P=q)\s*>\s*(?P<file>[^\s;|&<>]{1,300})"
)
_FILE_SUB = re.compile(
    r"\$\(\s*(?:cat\s+|<\s*)(?P<file>[^\s()`;|&]{1,300})\s*\)|`\s*cat\s+(?P<file2>[^\s`;|&]{1,300})\s*`"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}$")
_SET_ARGS = re.compile(r"(?:^|(?<=[\s;&|]))set\s+--\s+([^;&|\n]{0,400})")
_PROC_CWD = re.compile(r"^/proc/(?:self|\$\$|\$\{?PPID\}?|\d+|thread-self)/cwd(?=/|$)")
_HOME_LITERAL = re.compile(r"^/(?:home/[^/\s]+|root)(?=/|$)")
# A home path written anywhere in a command, also where no shell word holds it (a
# string in interpreter code: ``glob.glob('/home/agent/bench/**')``).
_HOME_PATH_IN_TEXT = re.compile(r"(?<![\w.~/$-])/(?:home/[\w.-]+|root)/[^\s'\"`;|&()<>,\\]+")
_BASE64_BLOB = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")
_HEX_BLOB = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")
_ESCAPED_BYTES = re.compile(r"(?:\\x[0-9A-Fa-f]{2}|\\[0-7]{3})+")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")", "|&", ";;"})
# Commands whose ``-C DIR`` (``--directory=DIR``) makes the operands after it relative
# to DIR, for that command only: ``tar czf x.tgz -C / tests`` archives /tests.
_DIRECTORY_OPTION = frozenset({"tar", "bsdtar", "gtar", "make", "gmake", "git"})
_GLOB_CHARS = re.compile(r"[*?\[]")
# Anything a shell would rewrite or that hides a path: quotes, escapes, expansions,
# globs, relative or doubled separators, a home, /proc, cd, or a blob to decode.
_REWRITES = re.compile(
    r"""[~$\\{}*?\[`'"]|\.\.?/|//|/home/|/root\b|/proc/|\b(?:cd|pushd|ln)\b|[A-Za-z0-9+]{16,}"""
    # an assignment (also a loop's or read's): its variable may name a path later
    r"""|(?:^|[\s;&|])[A-Za-z_]\w{0,40}=|\b(?:for|select)\s+\w+\s+in\b|\bread\b"""
    # tar/make/git -C DIR: the operands after it are relative to DIR
    r"""|\s-C|\s--directory="""
)
# Words of one command kept to rebuild it when a variable supplied an option.
_MAX_BUILT_WORDS = 64
# Commands whose ``-c`` string (``eval``'s words) is a command read again, and how deep.
_SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox", "su", "sudo", "runuser", "env"}
)
_DASH_C = re.compile(r"-[a-zA-Z]*c[a-zA-Z]*$")
# Commands that run a file they are given (its text is then what runs).
_RUNNERS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "source", ".", "node", "perl", "ruby", "php", "exec"}
)
_RUNNER = re.compile(r"python[0-9.]*$|pypy[0-9.]*$|ipython$")
_SHEBANG = re.compile(r"#!\s*(?:/usr/bin/env\s+)?(?:\S*/)?(\S+)")
# A comment line or a comment after a word, as a shell drops it before reading.
_SHELL_COMMENT = re.compile(r"(?m)(?:^|(?<=\s))#[^\n]*")


def _shebang(text: str) -> str:
    """The interpreter a script's ``#!`` line names (``sh`` when it names none)."""
    match = _SHEBANG.match(text)
    return match.group(1) if match is not None else "sh"


_MAX_NESTING = 3


@dataclass
class ShellState:
    """What carries over between an agent's shell calls: the working directory and the
    variables the agent set (``export D=~/bench`` in one call, ``cat $D/x`` in a later
    one), bounded by :data:`MAX_VARIABLES` names of :data:`MAX_VARIABLE_CHARS` each."""

    cwd: str | None = None
    variables: dict[str, str] = field(default_factory=dict)
    # Symbolic links the agent made (``ln -s TARGET NAME``): the name, as typed when it
    # was relative with no working directory known, to the target's path.
    links: dict[str, str] = field(default_factory=dict)
    # Scripts the agent wrote through a file tool (its path, absolute when known, to
    # the text), read when a later call runs them: the write is data, the run a read.
    scripts: dict[str, str] = field(default_factory=dict)
    # While a memo records a reading (``_script_memo.recorded``): the script lookups it
    # made, in order, with what each found, and whether it wrote a script. Not state:
    # what a reading's memo must find again to be reused.
    probes: list[tuple[str, str | None]] | None = field(default=None, repr=False, compare=False)
    wrote: bool = field(default=False, repr=False, compare=False)

    def frozen(self) -> tuple[Any, ...]:
        """A content key for this state (directory, variables, links, scripts)."""
        if not self.variables and not self.links and not self.scripts:
            return self.cwd, (), (), ()
        return (
            self.cwd,
            tuple(sorted(self.variables.items())),
            tuple(sorted(self.links.items())),
            tuple(sorted(self.scripts.items())),
        )

    def loose(self) -> tuple[Any, ...]:
        """A content key for this state without the scripts' text (directory, variables,
        links, whether any script is kept): a reading's memo key in ``_script_memo``,
        which checks the scripts a reading looked up instead."""
        if not self.variables and not self.links:
            return self.cwd, (), (), bool(self.scripts)
        return (
            self.cwd,
            tuple(sorted(self.variables.items())),
            tuple(sorted(self.links.items())),
            bool(self.scripts),
        )

    def after(self) -> tuple[Any, ...]:
        """What a reading that wrote no script leaves: directory, variables, links
        (sorted, as :meth:`frozen` has them: a restored state iterates in that order)."""
        return self.cwd, tuple(sorted(self.variables.items())), tuple(sorted(self.links.items()))

    def restore_after(self, after: tuple[Any, ...]) -> None:
        """Back to :meth:`after`'s directory, variables and links (scripts kept)."""
        self.cwd = after[0]
        self.variables = dict(after[1])
        self.links = dict(after[2])

    def script(self, path: str) -> str | None:
        """The script written to ``path`` (``None``: none), the lookup recorded."""
        value = self.scripts.get(path)
        if self.probes is not None:
            self.probes.append((path, value))
        return value

    def restore(self, frozen: tuple[Any, ...]) -> None:
        self.cwd = frozen[0]
        self.variables = dict(frozen[1])
        self.links = dict(frozen[2])
        self.scripts = dict(frozen[3]) if len(frozen) > 3 else {}

    def remember_script(self, path: str, text: str) -> None:
        """Keep what a file tool wrote to ``path`` (bounded in number and size)."""
        self.wrote = True
        if path in self.scripts or len(self.scripts) < MAX_SCRIPTS:
            self.scripts[path] = text[:MAX_SCRIPT_CHARS]


@dataclass(frozen=True)
class ShellReader:
    """Canonical paths and decoded text for commands, as this agent's shell sees them.

    ``home`` is the agent's home as it sees it (``None``: any ``/home/<user>`` or
    ``/root`` counts as a home, the usual case for imported logs); ``known_paths`` are
    absolute paths the harness knows exist (protected material, home entries), against
    which globs are resolved.
    """

    home: str | None = None
    known_paths: tuple[str, ...] = ()
    # Where benchmarks keep their material (``~/...`` or absolute), for a reader that
    # knows no paths of the disk (imported logs): a glob or a ``find`` that can name
    # one of them reads as naming it (``detection.glob_reach``).
    roots: tuple[str, ...] = ()
    _known_sorted: tuple[str, ...] = field(default=(), init=False, repr=False)
    # Commands read before, by their text and the shell's state (``_script_memo``).
    _commands: StateMemo = field(
        default_factory=StateMemo, init=False, repr=False, compare=False, hash=False
    )
    # Whole argument objects read before (the detector's ``read_entry``), by their
    # content and the shell's state: what they read as, and the state after.
    _readings: StateMemo = field(
        default_factory=StateMemo, init=False, repr=False, compare=False, hash=False
    )

    def remembered(self, key: Hashable, state: ShellState, read: Callable[[], T]) -> T:
        """``read()``'s value for the content key ``key`` (never an identity) on
        ``state``, remembered (bounded); ``state`` left as the reading leaves it."""
        return self._readings.read(key, state, read)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_known_sorted", tuple(sorted(set(self.known_paths))))

    def read(self, command: str, state: ShellState) -> list[str]:
        """Canonical words of ``command``; updates ``state.cwd`` on ``cd``.

        Results are remembered per (command, working directory): agents repeat commands
        (``ls``, ``git status``) and a scan reads many runs with one reader. A command
        with nothing a shell would rewrite, read where no working directory is known,
        names its paths as typed: it is skipped (the raw args already hold them).
        """
        if (
            state.cwd is None
            and not state.variables
            and not state.links
            and not state.scripts
            and _REWRITES.search(command) is None
        ):
            return []
        return list(self._commands.read(command, state, lambda: self._read(command, state)))

    def _read(self, command: str, state: ShellState) -> list[str]:
        text = _CONTINUATION.sub("", command[:MAX_COMMAND_CHARS])
        if ">" in text and ("echo" in text or "printf" in text):
            for write in _VALUE_WRITE.finditer(text):
                name = self._expand_vars(write.group("file"), dict(state.variables), state)
                value = write.group("value").strip()
                where = self._absolute(name, state)
                if where is not None:
                    state.remember_script(where, value)
                # Also as typed: this command's own ``cd`` is read after it.
                state.remember_script(name, value)
        if state.scripts and ("$(" in text or "`" in text):
            # ``$(cat /tmp/p)`` after ``echo ~/x > /tmp/p``: what the file holds.
            text = _FILE_SUB.sub(lambda m: self._file_value(m, state), text)
        decoded = decoded_blobs(text)
        text = _ANSI_C.sub(lambda m: "'" + _ansi_c(m.group(1)).replace("'", "") + "'", text)
        unescaped = _ESCAPED_BYTES.sub(
            lambda m: _escaped(m.group(0)).decode("utf-8", "replace"), text
        )
        lines = [text] if unescaped == text else [text, unescaped]
        # Substitutions over both spellings: ``$(printf '\\057home...')`` prints a
        # path only once its escapes are read.
        for line in list(lines):
            substituted = _substituted(line)
            if substituted not in lines:
                lines.append(substituted)
        # ``echo WORD | tr ... | xargs cat``: the command the pipeline's end runs.
        lines.extend(piped_literals(text))
        words: list[str] = []
        # A decoded blob is an argument (`cat "$(echo ... | base64 -d)"`), never a command.
        for line in [*lines, *(": " + item for item in decoded)]:
            words.extend(self._read_line(line, state))
            if len(words) > MAX_WORDS:
                break
        words.extend(decoded)
        # A home named in code the shell does not read (an interpreter's string) is
        # still a home: spelled as ``~/...`` like a shell word's.
        for match in _HOME_PATH_IN_TEXT.finditer(text):
            spelled = self._spelled(posixpath.normpath(match.group(0)))
            if spelled.startswith("~"):
                words.append(spelled)
        # A home path code assembles (os.path.join(expanduser("~"), ...), Path.home()
        # / ..., node's homedir(), perl's $ENV{HOME}): read as typed (code_paths).
        if "~" in text or "ome" in text or "HOME" in text or "join" in text or inline_hinted(text):
            for path in code_paths(text):
                if path.startswith("/"):
                    path = self._spelled(posixpath.normpath(path))
                words.append(path)
                if _GLOB_CHARS.search(path):
                    words.extend(self._spelled(found) for found in self._glob(path))
                    if self.roots:
                        words.extend(glob_reach(path, self.roots))
        if python_hinted(text):
            words.extend(self._program_words(text, state))
        return list(dict.fromkeys(words))[:MAX_WORDS]

    def _file_value(self, match: re.Match[str], state: ShellState) -> str:
        name = match.group("file") or match.group("file2") or ""
        path = self._absolute(name, state) or name
        fallback = state.script(name)
        value = state.script(path)
        if value is None:
            value = fallback
        if value is None:
            return match.group(0)
        line = value.strip().splitlines()[0] if value.strip() else ""
        return shlex.quote(line) if line else match.group(0)

    def _program_words(self, text: str, state: ShellState) -> list[str]:
        """Paths a Python program in ``text`` computes (``program_paths``), spelled as
        shell words are, with the globs its unknown pieces leave resolved, and the
        protected roots its directory walks can read."""
        reading = read_python(text)
        out: list[str] = []
        for value in reading.paths:
            path = self._absolute(value, state)
            if path is None:
                continue
            spelled = self._spelled(path)
            out.append(spelled)
            if _GLOB_CHARS.search(spelled):
                out.extend(self._spelled(match) for match in self._glob(path))
                if self.roots:
                    out.extend(glob_reach(spelled, self.roots))
        for line in reading.commands:
            # ``os.system('cat ~/...')``: a command line a child shell reads.
            child = ShellState(cwd=state.cwd, variables=dict(state.variables))
            out.extend(self._read_line(line, child, _MAX_NESTING - 1))
        roots = self.roots or tuple(self._spelled(known) for known in self._known_sorted)
        for walk in reading.walks:
            path = self._absolute(walk.root, state)
            if path is None or not roots:
                continue
            out.extend(walk_reach(self._spelled(path), walk.recursive, reading.constants, roots))
        return out

    def _read_line(self, text: str, state: ShellState, depth: int = 0) -> list[str]:
        tokens = _tokens(text)
        # Variables an earlier call set carry over (the agent's shell keeps them).
        variables: dict[str, str] = dict(state.variables)
        # ``$HOME`` is the home: the agent's, or any home when none is known.
        variables["HOME"] = self.home or "~"
        if "=(" in text or "set " in text:
            self._arrays(text, variables, state)
        if "for" in tokens or "read" in tokens or "select" in tokens:
            self._loop_variables(tokens, variables, state)
        out: list[str] = []
        command_start = True
        previous = ""
        command = ""
        last = ""
        # The working directory before a ``-C DIR`` changed it for one command (a
        # one-element list: set while that command's words are read).
        before_option: list[str | None] = []
        # This command's words as typed and as expanded (see _built_command).
        typed: list[tuple[str, str]] = []
        for token in tokens:
            if (
                depth < _MAX_NESTING
                and not command_start
                and (command == "eval" or (command in _SHELLS and _DASH_C.match(last)))
                and token not in _SEPARATORS
            ):
                # ``eval "..."``, ``sh -c '...'``, ``su -c``: the string is a command
                # the shell reads again (its variables expanded in the outer shell). A
                # child shell's ``cd`` ends with it; eval's stays.
                cwd = state.cwd
                out.extend(
                    self._read_line(self._expand_vars(token, variables, state), state, depth + 1)
                )
                if command != "eval":
                    state.cwd = cwd
                last = token
                continue
            prior, last = last, token
            if token in _SEPARATORS:
                out.extend(_built_command(typed))
                typed = []
                if before_option:
                    state.cwd = before_option.pop()
                if previous == "cd":
                    # A bare ``cd`` goes home.
                    state.cwd = self.home or "/home/~"
                command_start = True
                previous = ""
                command = ""
                continue
            if command_start and token in _DECLARE:
                continue
            assignment = _ASSIGN.match(token) if command_start else None
            if assignment is not None:
                name = assignment.group(1)
                value = self._expand_vars(assignment.group(2), variables, state)
                if name != "HOME" and len(value) <= MAX_VARIABLE_CHARS:
                    variables[name] = value
                    if name in state.variables or len(state.variables) < MAX_VARIABLES:
                        state.variables[name] = value
                out.extend(self._canonical_words(value, state))
                continue
            expanded = self._expand_vars(token, variables, state)
            if len(typed) < _MAX_BUILT_WORDS:
                typed.append((token, expanded))
            if not command_start:
                for word in brace_expand(expanded):
                    out.extend(self._canonical_words(word, state))
            if previous in {"cd", "pushd"} and not command_start:
                target = self._absolute(expanded, state)
                if target is not None:
                    state.cwd = target
            if command in _DIRECTORY_OPTION and not command_start:
                self._directory_option(prior, expanded, state, before_option)
            if command_start:
                command = posixpath.basename(token)
            if state.scripts and depth < _MAX_NESTING:
                out.extend(self._run_script(token, command_start, command, state, depth))
            previous = token if command_start else ("" if previous == "cd" else previous)
            command_start = False
        out.extend(_built_command(typed))
        if previous == "cd":
            state.cwd = self.home or "/home/~"
        if before_option:
            state.cwd = before_option.pop()
        if "ln" in text:
            self._links(tokens, variables, state)
        if self.roots and "find" in text:
            out.extend(find_reach(tokens, lambda word: self._root_spelled(word, state), self.roots))
        if "tar" in text or "zip" in text or "7z" in text:
            # ``tar -xOf x.tar '*solution*'``: a member pattern naming Harbor's layout.
            out.extend(archive_reach(tokens))
        return out

    def _directory_option(
        self, prior: str, word: str, state: ShellState, before: list[str | None]
    ) -> None:
        """``-C DIR``, ``-CDIR`` or ``--directory=DIR`` of :data:`_DIRECTORY_OPTION`:
        the words after it are relative to DIR until the command ends (``before``
        keeps the directory to go back to)."""
        if prior == "-C":
            target = word
        elif word.startswith("--directory="):
            target = word.removeprefix("--directory=")
        elif word.startswith("-C") and len(word) > 2 and not word.startswith("-C-"):
            target = word[2:]
        else:
            return
        spelled = self._absolute(target, state)
        if spelled is None:
            return
        if not before:
            before.append(state.cwd)
        state.cwd = spelled

    def _loop_variables(
        self, tokens: list[str], variables: dict[str, str], state: ShellState
    ) -> None:
        """``for d in WORDS`` binds ``d`` to its one word or glob (``~/*``), or to ``*``
        over several; ``read d`` (a line of input) and ``select`` bind ``*``: one
        unknown path component, which globs then resolve."""
        bound: dict[str, str] = {}
        for at, token in enumerate(tokens):
            if at and tokens[at - 1] not in _SEPARATORS and tokens[at - 1] not in _KEYWORDS:
                continue
            if token in {"for", "select"} and at + 2 < len(tokens) and tokens[at + 2] == "in":
                name = tokens[at + 1]
                words: list[str] = []
                for word in tokens[at + 3 :]:
                    if word in _SEPARATORS or word == "do":
                        break
                    words.append(self._expand_vars(word, variables, state))
                if _IDENTIFIER.match(name):
                    bound[name] = words[0] if len(words) == 1 else "*"
            elif token == "read":
                for word in tokens[at + 1 :]:
                    if word in _SEPARATORS:
                        break
                    if _IDENTIFIER.match(word):
                        bound[word] = "*"
        for name, value in bound.items():
            variables[name] = value
            if name in state.variables or len(state.variables) < MAX_VARIABLES:
                state.variables[name] = value

    def _arrays(self, text: str, variables: dict[str, str], state: ShellState) -> None:
        """``name=(a b)`` and ``set -- a b``: their items as ``name[i]`` and ``$1``..."""
        assigned: dict[str, str] = {}
        for match in _ARRAY.finditer(text):
            items = [t for t in _tokens(match.group(2)) if t not in _SEPARATORS]
            name = match.group(1)
            for index, item in enumerate(items[:MAX_VARIABLES]):
                assigned[f"{name}[{index}]"] = self._expand_vars(item, variables, state)
            if items:
                assigned[name] = assigned[f"{name}[0]"]
        for match in _SET_ARGS.finditer(text):
            items = [t for t in _tokens(match.group(1)) if t not in _SEPARATORS]
            for index, item in enumerate(items[:9], start=1):
                assigned[str(index)] = self._expand_vars(item, variables, state)
        for name, value in assigned.items():
            if len(value) > MAX_VARIABLE_CHARS:
                continue
            variables[name] = value
            if name in state.variables or len(state.variables) < MAX_VARIABLES:
                state.variables[name] = value

    def _run_script(
        self, token: str, command_start: bool, command: str, state: ShellState, depth: int
    ) -> list[str]:
        """What a script the agent wrote reads when this word runs it: the script as a
        command (``./x.sh``) or as an interpreter's or shell's file argument
        (``python3 /tmp/x.py``, ``bash x.sh``, ``source x``). It runs in a child:
        its ``cd`` does not move the caller."""
        if not command_start and command not in _RUNNERS and not _RUNNER.match(command):
            return []
        path = self._absolute(token, state) if ("/" in token or state.cwd) else None
        text = state.script(path or "") or state.script(token)
        if text is None:
            return []
        child = ShellState(cwd=state.cwd, variables=dict(state.variables), links=dict(state.links))
        runner = command if not command_start else _shebang(text)
        if _RUNNER.match(runner):
            # Python: its own parser reads it (comments and strings are not commands).
            return self._program_words(text, child)
        if runner in {"node", "perl", "ruby", "php"}:
            return [
                self._spelled(posixpath.normpath(path)) if path.startswith("/") else path
                for path in code_paths(text)
            ]
        return self._read_line(_SHELL_COMMENT.sub("", text), child, depth + 1)

    def _links(self, tokens: list[str], variables: dict[str, str], state: ShellState) -> None:
        """Remember ``ln -s TARGET NAME`` so a later ``NAME/...`` reads as the target."""
        for start, token in enumerate(tokens):
            if token != "ln" or (start and tokens[start - 1] not in _SEPARATORS):
                continue
            words: list[str] = []
            symbolic = False
            for word in tokens[start + 1 :]:
                if word in _SEPARATORS:
                    break
                if word.startswith("-"):
                    symbolic = (
                        symbolic
                        or ("s" in word and not word.startswith("--"))
                        or word == "--symbolic"
                    )
                    continue
                words.append(self._expand_vars(word, variables, state))
            if not symbolic or len(words) != 2 or len(state.links) >= MAX_VARIABLES:
                continue
            target = self._absolute(words[0], state)
            if target is None:
                continue
            name = self._absolute(words[1], state) or words[1].rstrip("/")
            if name and len(name) <= MAX_VARIABLE_CHARS:
                state.links[name] = target

    def _through_links(self, word: str, state: ShellState) -> str:
        for name, target in state.links.items():
            if word == name or word.startswith(name + "/"):
                return target + word[len(name) :]
        return word

    def _root_spelled(self, word: str, state: ShellState) -> str | None:
        path = self._absolute(word, state)
        return None if path is None else self._spelled(path)

    def _expand_vars(self, word: str, variables: dict[str, str], state: ShellState) -> str:
        def value(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(2) or match.group(3)
            index = match.group(4)
            if index is not None:
                key = index[1:-1].strip()
                if key in {"@", "*"}:
                    items = [
                        variables[f"{name}[{i}]"]
                        for i in range(MAX_VARIABLES)
                        if f"{name}[{i}]" in variables
                    ]
                    return " ".join(items) if items else match.group(0)
                name = f"{name}[{key}]"
            if name == "PWD" and state.cwd:
                current: str | None = state.cwd
            else:
                current = variables.get(name)
            operation = match.group(5)
            if operation:
                expanded = _parameter_operation(current, operation)
                return match.group(0) if expanded is None else expanded
            return match.group(0) if current is None else current

        return _VAR.sub(value, word) if "$" in word else word

    def _canonical_words(self, word: str, state: ShellState) -> list[str]:
        if state.links:
            word = self._through_links(word, state)
        bare = "/" not in word and not word.startswith("~")
        # A bare name is a path relative to a known working directory (after
        # `cd ~/bench; cat task.yaml`); options and empty words are not.
        if bare and (state.cwd is None or not word or word.startswith("-") or "=" in word):
            return []
        path = self._absolute(word, state)
        if path is None:
            return []
        if state.links:
            path = self._through_links(path, state)
        found = [self._spelled(path)]
        if _GLOB_CHARS.search(path):
            found.extend(self._spelled(match) for match in self._glob(path))
            if self.roots:
                found.extend(glob_reach(found[0], self.roots))
        return found

    def absolute(self, word: str, state: ShellState) -> str | None:
        """``word`` as an absolute normalised path (``None``: not a path, or relative
        with no working directory known)."""
        return self._absolute(word, state)

    def _absolute(self, word: str, state: ShellState) -> str | None:
        """``word`` as an absolute normalised path, or ``None`` if it is not a path."""
        if not word or word.startswith(("-", "http:", "https:")) or "://" in word:
            return None
        path = word
        if path.startswith("~"):
            head, _, rest = path[1:].partition("/")
            # ~ and ~user: this agent's home (a sandbox has one user that matters).
            home = self.home or (f"/home/{head}" if head else "/home/~")
            if head and self.home is not None and head not in {"", posixpath.basename(self.home)}:
                home = f"/home/{head}"
            path = home + ("/" + rest if rest else "")
        proc = _PROC_CWD.match(path)
        if proc is not None:
            if state.cwd is None:
                return None
            path = state.cwd + path[proc.end() :]
        if not path.startswith("/"):
            if state.cwd is None:
                return None
            path = state.cwd.rstrip("/") + "/" + path
        normal = posixpath.normpath(path)
        return "/" + normal.lstrip("/")

    def _spelled(self, path: str) -> str:
        """``~/...`` inside the home, the absolute path elsewhere."""
        if self.home is not None:
            home = self.home.rstrip("/")
            if path == home:
                return "~"
            if path.startswith(home + "/"):
                return "~" + path[len(home) :]
            return path
        match = _HOME_LITERAL.match(path)
        if match is not None:
            return "~" + path[match.end() :]
        return path

    def _glob(self, pattern: str) -> list[str]:
        """Known paths the glob can name, or that lie under a directory it names."""
        found: list[str] = []
        depth = pattern.count("/")
        for known in self._known_sorted:
            parts = known.split("/")
            prefix = "/".join(parts[: depth + 1])
            if fnmatch.fnmatchcase(prefix, pattern) and prefix not in found:
                found.append(prefix)
                if len(found) >= MAX_GLOB_MATCHES:
                    break
        return found


def _parameter_operation(value: str | None, operation: str) -> str | None:
    """Bash's parameter expansion of ``value`` by ``operation`` (the text after the
    name: ``:1:12``, ``#pat``, ``%%pat``, ``/a/b``, ``^^``, ``:-default``); ``None``
    when the reading cannot say (an unset name, an arithmetic offset)."""
    if operation[:2] in {":-", ":="} or operation[:1] in {"-", "="}:
        default = operation[2:] if operation[:1] == ":" else operation[1:]
        return value if value else default
    if value is None:
        return None
    if operation[:1] == ":" and operation[1:2] not in {"+", "?"}:
        numbers = operation[1:].split(":")
        try:
            offset = int(numbers[0].strip() or "0")
            length = int(numbers[1].strip()) if len(numbers) > 1 else None
        except ValueError:
            return None
        start = offset if offset >= 0 else max(0, len(value) + offset)
        if length is None:
            return value[start:]
        return value[start : start + length] if length >= 0 else value[start:length]
    if operation[:1] in {"#", "%"}:
        greedy = operation[:2] in {"##", "%%"}
        pattern = operation[2:] if greedy else operation[1:]
        cuts = range(len(value) + 1)
        if operation[0] == "#":
            order = reversed(cuts) if greedy else iter(cuts)
            for cut in order:
                if fnmatch.fnmatchcase(value[:cut], pattern):
                    return value[cut:]
        else:
            order = iter(cuts) if greedy else reversed(cuts)
            for cut in order:
                if fnmatch.fnmatchcase(value[cut:], pattern):
                    return value[:cut]
        return value
    if operation[:1] == "/":
        every = operation[:2] == "//"
        body = operation[2:] if every else operation[1:]
        pattern, _, replacement = body.partition("/")
        if not pattern or _GLOB_CHARS.search(pattern):
            return None
        return value.replace(pattern, replacement, -1 if every else 1)
    if operation in {"^^", ",,", "^", ","}:
        if operation == "^^":
            return value.upper()
        if operation == ",,":
            return value.lower()
        return (value[:1].upper() if operation == "^" else value[:1].lower()) + value[1:]
    return None


def _built_command(typed: list[tuple[str, str]]) -> list[str]:
    """The command line with its variables expanded, as one word, when a variable
    supplied an option (``F=$(printf -- '--al%s' l); git log $F``): the rules read a
    command's options from the typed arguments, where a built option is only ``$F``.
    Commands without a built option add nothing (their paths are already words)."""
    if not typed or not any(
        "$" in token and expanded != token and expanded.startswith("-") for token, expanded in typed
    ):
        return []
    return [" ".join(expanded for _, expanded in typed)]


def built_commands(command: str) -> list[str]:
    """The command lines of ``command`` whose options a variable supplied, expanded
    (``F=--all; git log $F`` -> ``git log --all``), read on their own (no earlier
    call's variables): what the provenance pass matches history commands against."""
    if "$" not in command:
        return []
    words = ShellReader().read(command[:MAX_COMMAND_CHARS], ShellState())
    # Paths are the reader's other words: absolute or home-spelled, never a bare name.
    return [word for word in words if " " in word and not word.startswith(("/", "~"))]


def _substituted(text: str) -> str:
    """``text`` with ``$(printf FMT ARGS)`` and ``$(echo WORD | rev)`` replaced by what
    they print (bounded by the patterns' lengths); anything else is left as typed."""

    def printf(match: re.Match[str]) -> str:
        words = _tokens(match.group(1) or match.group(2) or "")
        if not words or any(word in _SEPARATORS for word in words):
            return match.group(0)
        # ``printf -- '--al%s' l``: ``--`` ends printf's options, so a format that
        # starts with a dash (an option it builds) is the word after it.
        if words[0] == "--":
            words = words[1:]
        if not words:
            return match.group(0)
        fmt, args = words[0], iter(words[1:])
        body = _PRINTF_SPEC.sub(lambda m: "%" if m.group(0) == "%%" else next(args, ""), fmt)
        return body.replace("\\n", "").replace("\n", "")

    def piped(match: re.Match[str]) -> str:
        word = match.group("word") or match.group("word2") or ""
        chain = match.group("chain") or match.group("chain2") or ""
        value = transformed(word, chain)
        return match.group(0) if value is None else value

    out = _PRINTF_SUB.sub(printf, text) if "printf" in text else text
    if "|" in out and ("$(" in out or "`" in out):
        out = _PIPE_SUB.sub(piped, out)
    return out


def piped_literals(text: str) -> list[str]:
    """``echo WORD | transforms | xargs CMD`` and ``... | sh``: the command the
    pipeline's end runs, with the literal undone (``CMD VALUE``, or ``VALUE``)."""
    if "|" not in text:
        return []
    found: list[str] = []
    for match in _PIPE_ON.finditer(text):
        value = transformed(match.group("word"), match.group("chain"))
        if value is None:
            continue
        sink = match.group("sink")
        if sink.startswith("xargs"):
            words = sink.split()
            rest = [w for w in words[1:] if not w.startswith("-")]
            found.append(" ".join([*rest, shlex.quote(value)]))
        else:
            found.append(value)
    return found


def transformed(word: str, chain: str) -> str | None:
    """``word`` after each transform of ``chain`` (``rev``, ``tr SET1 SET2``, base64,
    base32 and hex decoding), or ``None`` when one does not apply."""
    value = word
    for step in _ONE_TRANSFORM.finditer(chain):
        command = step.group(0)
        try:
            if command == "rev":
                value = value[::-1]
            elif command.startswith("tr"):
                sets = _tokens(command)[1:3]
                if len(sets) != 2:
                    return None
                value = _translate(value, sets[0], sets[1])
            elif command.startswith("base64"):
                value = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
            elif command.startswith("base32"):
                value = base64.b32decode(value + "=" * (-len(value) % 8)).decode()
            else:
                value = binascii.unhexlify(value).decode()
        except (binascii.Error, ValueError):
            return None
        if not value.isprintable():
            return None
    value = value.strip()
    return value or None


def _tr_set(spec: str) -> str:
    """A ``tr`` set with its ranges spelled out (``a-z``), bounded."""
    out: list[str] = []
    index = 0
    while index < len(spec) and len(out) < 512:
        if index + 2 < len(spec) and spec[index + 1] == "-":
            start, end = ord(spec[index]), ord(spec[index + 2])
            out.extend(chr(code) for code in range(start, min(end, start + 512) + 1))
            index += 3
        else:
            out.append(spec[index])
            index += 1
    return "".join(out)


def _translate(value: str, first: str, second: str) -> str:
    source, target = _tr_set(first), _tr_set(second)
    if not source or not target:
        return value
    target = target + target[-1] * max(0, len(source) - len(target))
    return value.translate(str.maketrans(source, target[: len(source)]))


def _ansi_c(body: str) -> str:
    try:
        return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body


# One piece of a shell word, or an operator: single-quoted, double-quoted, a backslash
# escape, a run of plain characters; operators and line breaks separate commands. An
# unbalanced quote runs to the end of the text, as a shell reading more input would.
_PIECE = re.compile(
    r"(?P<single>'[^']*(?:'|$))"
    r'|(?P<double>"(?:[^"\\]|\\.)*(?:"|$))'
    r"|(?P<escape>\\.)"
    r"|(?P<plain>[^\s'\"\\;&|()<>]+)"
    r"|(?P<operator>[;&|()<>]+|\n)"
    r"|(?P<space>[ \t\r\f\v]+)"
    r"|(?P<stray>\\$)",
    re.S,
)
_DOUBLE_ESCAPE = re.compile(r'\\([\\"$`])')


def _tokens(text: str) -> list[str]:
    """Shell words with quotes removed, and ``;`` for each operator between commands."""
    tokens: list[str] = []
    word: list[str] | None = None
    for match in _PIECE.finditer(text):
        kind = match.lastgroup
        piece = match.group(0)
        if kind in ("space", "operator", "stray"):
            if word is not None:
                tokens.append("".join(word))
                word = None
            if kind == "operator":
                tokens.append(";")
            if len(tokens) > MAX_WORDS:
                break
            continue
        if kind == "single":
            piece = piece[1:-1] if len(piece) > 1 and piece.endswith("'") else piece[1:]
        elif kind == "double":
            inner = piece[1:-1] if len(piece) > 1 and piece.endswith('"') else piece[1:]
            piece = _DOUBLE_ESCAPE.sub(r"\1", inner)
        elif kind == "escape":
            piece = piece[1:]
        if word is None:
            word = [piece]
        else:
            word.append(piece)
    if word is not None:
        tokens.append("".join(word))
    return tokens


def brace_expand(word: str) -> list[str]:
    """Bash brace expansion of one word (``a{b,c}d`` -> ``abd acd``), bounded."""
    results = [word]
    for _ in range(8):
        changed = False
        expanded: list[str] = []
        for item in results:
            parts = _first_brace(item)
            if parts is None:
                expanded.append(item)
                continue
            changed = True
            head, options, tail = parts
            expanded.extend(head + option + tail for option in options)
        results = expanded[:MAX_BRACE_WORDS]
        if not changed:
            break
    return results


def _first_brace(word: str) -> tuple[str, list[str], str] | None:
    start = word.find("{")
    while start != -1:
        depth, index, commas = 0, start, []
        while index < len(word):
            char = word[index]
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    break
            elif char == "," and depth == 1:
                commas.append(index)
            index += 1
        if index < len(word) and commas:
            bounds = [start, *commas, index]
            options = [word[a + 1 : b] for a, b in itertools.pairwise(bounds)]
            return word[:start], options, word[index + 1 :]
        start = word.find("{", start + 1)
    return None


def decoded_blobs(text: str, *, limit: int = MAX_DECODED_CHARS) -> list[str]:
    """Printable text hidden in base64, hex or ``\\xNN`` blobs of ``text`` (bounded)."""
    found: list[str] = []
    budget = limit
    for match in _ESCAPED_BYTES.finditer(text):
        _keep(found, _escaped(match.group(0)), budget)
    for match in _HEX_BLOB.finditer(text):
        try:
            _keep(found, binascii.unhexlify(match.group(0)), budget)
        except (binascii.Error, ValueError):
            continue
    for match in _BASE64_BLOB.finditer(text):
        blob = match.group(0)
        try:
            _keep(found, base64.b64decode(blob + "=" * (-len(blob) % 4)), budget)
        except (binascii.Error, ValueError):
            continue
        budget = limit - sum(len(item) for item in found)
        if budget <= 0:
            break
    return found


def _escaped(text: str) -> bytes:
    try:
        return codecs.escape_decode(text.encode())[0]
    except ValueError:
        return b""


def _keep(found: list[str], data: bytes, budget: int) -> None:
    if not data or budget <= 0:
        return
    try:
        text = data[:budget].decode("utf-8")
    except UnicodeDecodeError:
        return
    printable = sum(1 for char in text if char.isprintable() or char in "\n\t")
    if printable == len(text) and len(text) >= 4:
        found.append(text)


def command_strings(args: object) -> Iterable[str]:
    """The strings of a tool call's arguments a shell or a file tool would read."""
    if isinstance(args, str):
        yield args
    elif isinstance(args, dict):
        for value in args.values():
            # A plain string value (nearly every argument) without a nested generator:
            # about 30 callers walk every step's arguments.
            if type(value) is str:
                yield value
            else:
                yield from command_strings(value)
    elif isinstance(args, list | tuple):
        for value in args:
            yield from command_strings(value)


# Argument names of structured file tools (read_file, glob, list_dir, str_replace_editor):
# their value is one path or pattern, not a shell command.
PATH_ARGUMENTS = frozenset(
    {"path", "file_path", "filepath", "filename", "file", "pattern", "directory", "dir", "paths"}
)


# Argument names whose value a shell runs; any other string (a file's new content, a
# message) is read only when short: a long one is data, and reading it is slow.
# ``keystrokes``: what Harbor's terminus agents type into their terminal.
COMMAND_ARGUMENTS = frozenset(
    {"command", "cmd", "commands", "script", "code", "bash", "shell", "keystrokes"}
)
MAX_OTHER_ARGUMENT_CHARS = 512


# Argument names of a file tool's new content (str_replace_editor's ``create``,
# write_file, Claude Code's Write).
CONTENT_ARGUMENTS = frozenset({"file_text", "content", "contents", "text", "new_content"})


def _first_string(args: dict[Any, Any], names: frozenset[str]) -> str | None:
    """The first string value under a key in ``names`` (any case), in ``args``' order."""
    for key, value in args.items():
        if isinstance(key, str) and isinstance(value, str) and key.lower() in names:
            return value
    return None


def _remember_written(reader: ShellReader, args: dict[Any, Any], state: ShellState) -> None:
    """A file tool's write (a path and whole new content): kept on ``state`` so a later
    call that runs the file reads what it holds."""
    path = _first_string(args, PATH_ARGUMENTS)
    if path is None:
        return
    text = _first_string(args, CONTENT_ARGUMENTS)
    if text is None:
        return
    where = reader.absolute(path, state) or path
    state.remember_script(where, text)


def command_text(args: object, *, limit: int = 4096) -> str:
    """What a shell ran in this call (the command-like arguments), at most ``limit``
    characters: what names a transform (``base64``, ``rev``) applied to the result."""
    if isinstance(args, str):
        return args[:limit]
    if not isinstance(args, dict):
        return ""
    parts = [
        text
        for key, value in args.items()
        if isinstance(key, str) and key.lower() in COMMAND_ARGUMENTS
        for text in command_strings(value)
    ]
    return "\n".join(parts)[:limit]


def canonical_text(reader: ShellReader, args: object, state: ShellState) -> str:
    """The canonical words of every command string in ``args``, one per line."""
    words: list[str] = []
    if isinstance(args, dict):
        _remember_written(reader, args, state)
        for key, value in args.items():
            name = key.lower() if isinstance(key, str) else ""
            if (
                name in COMMAND_ARGUMENTS
                and isinstance(value, list)
                and 1 < len(value) <= 64
                and all(isinstance(item, str) for item in value)
            ):
                # An argv (``["cat", "/home/agent/x"]``): one command, its words quoted.
                words.extend(reader.read(shlex.join(value), state))
            for text in command_strings(value):
                if name in PATH_ARGUMENTS:
                    words.extend(reader.read(": " + shlex.quote(text), state))
                elif name in COMMAND_ARGUMENTS or len(text) <= MAX_OTHER_ARGUMENT_CHARS:
                    words.extend(reader.read(text, state))
    else:
        for text in command_strings(args):
            words.extend(reader.read(text, state))
    # A write in a format's own shape (Codex's patch envelope, SWE-agent's editor
    # command line) as the content argument a structured write tool gives.
    words.extend(write_views(command_strings(args)))
    return "\n".join(dict.fromkeys(words))


__all__ = [
    "MAX_BRACE_WORDS",
    "MAX_COMMAND_CHARS",
    "ShellReader",
    "ShellState",
    "brace_expand",
    "built_commands",
    "canonical_text",
    "command_strings",
    "command_text",
    "decoded_blobs",
]
