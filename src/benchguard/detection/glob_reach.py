"""Globs and ``find`` expressions that reach a benchmark's material, with no disk known.

A scan of someone else's log has no listing of the agent's home: a glob such as
``~/b*/t*/*/t*.yaml`` or ``find ~ -path '*controls*' | xargs cat`` resolves against
nothing, so no path rule sees what it named. What the detector does know is where the
benchmarks it has profiles for keep their material (every profile's ``material:``
list, data). This module answers one question for each glob word and each ``find``:
could it name one of those roots? If so, the root (and the rest of the glob below it)
is appended to the args surface as a canonical path, and the profile's path rules
judge it like a typed one.

A glob reaches a root only when it discriminates: the glob's components that match the
root's must carry at least one literal character beyond the home (``~/*/results`` names
a results tree; ``ls ~/*`` names every home entry and is not a reach). A ``find``
reaches a root under its start directory when its ``-path``/``-wholename`` pattern
matches the root (or a directory above it), or its ``-name`` pattern (no leading
wildcard, at least three literal characters) matches one of the root's components.

Pure and bounded: at most :data:`MAX_REACHED` paths per word.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Callable, Sequence

MAX_REACHED = 16
_WILDCARDS = frozenset("*?[]!")
_FIND_PATH_TESTS = frozenset({"-path", "-ipath", "-wholename", "-iwholename"})
_FIND_NAME_TESTS = frozenset({"-name", "-iname"})
_MIN_NAME_LITERALS = 3


# Material a benchmark mounts outside the home, which no profile's ``material:`` lists
# (those are fingerprinted in the home): Harbor's verifier tests, its oracle's
# solution and the verifier's reward folder (the harbor-* path rules, in every
# profile: generic.yaml).
_MOUNTED_ROOTS = ("/logs/verifier", "/oracle", "/solution", "/tests")
# Files Harbor's layout is known to hold, for a ``find -name`` that names one of them
# below a start directory above the root (``find / -name test_outputs.py -exec cat {}
# \;``): only names no other benchmark's files carry (test.sh is every repository's).
_MOUNTED_MEMBERS: dict[str, tuple[str, ...]] = {
    "/tests": ("test_outputs.py",),
    "/oracle": ("solve.sh",),
    "/solution": ("solve.sh",),
    "/logs/verifier": ("reward.txt", "reward.json"),
}
# Ordinary file names a ``-name`` pattern must not match to reach a member: a pattern
# as wide as ``test_*.py`` or ``*.sh`` is a search of a project, not of the grader.
_ORDINARY_NAMES = (
    "test.py", "test_main.py", "test_utils.py", "tests.py", "conftest.py", "setup.py",
    "run.sh", "setup.sh", "build.sh", "install.sh", "test.sh", "start.sh",
    "output.txt", "outputs.txt", "result.txt", "results.txt", "data.json", "result.json",
    "results.json", "package.json",
)  # fmt: skip


@functools.lru_cache(maxsize=1)
def default_roots() -> tuple[str, ...]:
    """Every shipped profile's material roots, spelled ``~/...`` or absolute, sorted,
    and the material benchmarks mount outside the home (:data:`_MOUNTED_ROOTS`)."""
    from benchguard.detection.rules import RulesetError, profile_material, profile_names

    roots: set[str] = set(_MOUNTED_ROOTS)
    for name in profile_names():
        try:
            roots.update(profile_material(name))
        except RulesetError:
            continue  # a broken profile is reported where it is used
    return tuple(sorted(root.rstrip("/") for root in roots if root.strip("/~")))


def _literal(component: str) -> bool:
    return any(ch not in _WILDCARDS for ch in component)


def _globbed(component: str) -> bool:
    return any(ch in "*?[" for ch in component)


def glob_reach(pattern: str, roots: Sequence[str]) -> list[str]:
    """Roots (or the directories above them) the glob ``pattern`` can name, each
    followed by the glob's components below it. ``pattern`` is spelled like the roots
    (``~/...`` inside the home, absolute elsewhere). A ``**`` component stands for any
    number of directories (``rglob``, ``glob(recursive=True)``, bash's globstar)."""
    parts = pattern.rstrip("/").split("/")
    if not any(_globbed(part) for part in parts):
        return []
    if "**" in parts:
        return _globstar_reach(parts, roots)
    found: list[str] = []
    for root in roots:
        root_parts = root.split("/")
        depth = min(len(parts), len(root_parts))
        head = parts[:depth]
        if head[0] != root_parts[0] or not any(_globbed(part) for part in head):
            continue
        if not any(_literal(part) for part in head[1:]):
            continue  # `~/*`, `/*/*`: every entry, not this one
        if not all(fnmatch.fnmatchcase(root_parts[i], head[i]) for i in range(1, depth)):
            continue
        reached = "/".join([*root_parts[:depth], *parts[depth:]])
        if reached not in found:
            found.append(reached)
            if len(found) >= MAX_REACHED:
                break
    return found


def _globstar_reach(parts: list[str], roots: Sequence[str]) -> list[str]:
    """``glob_reach`` for a pattern with ``**``: each ``**`` tried as zero to three
    directories, so ``~/**/controls/*`` names ``~/devops-bench/controls``."""
    found: list[str] = []
    stars = [i for i, part in enumerate(parts) if part == "**"][:2]
    options: list[list[str]] = [parts]
    for _ in stars:
        grown: list[list[str]] = []
        for option in options:
            at = option.index("**")
            for width in range(4):
                grown.append([*option[:at], *(["*"] * width), *option[at + 1 :]])
        options = grown
    for option in options:
        if "**" in option or not option or not any(_literal(p) for p in option[1:]):
            continue
        for reached in glob_reach("/".join(option), roots):
            if reached not in found:
                found.append(reached)
                if len(found) >= MAX_REACHED:
                    return found
    return found


def walk_reach(
    root: str, recursive: bool, constants: Sequence[str], roots: Sequence[str]
) -> list[str]:
    """Roots a program's directory walk can read: a protected root below the walk's
    ``root`` (spelled like the roots) that one of the program's string ``constants``
    names by a component between the two (``os.walk(home)`` with ``'controls' in r``,
    ``os.listdir(home)`` then ``join(home, d, 'controls')``). A one-level listing
    reaches only the entries right below it, and a walk of ``/`` or the home alone,
    with no constant naming anything under it, reaches nothing."""
    base = root.rstrip("/") or "/"
    names = {
        constant.strip("/")
        for constant in constants
        if len(constant.strip("/")) >= _MIN_NAME_LITERALS + 1
        and not any(ch in constant for ch in " \n\t*?[")
    }
    if not names:
        return []
    found: list[str] = []
    for protected in roots:
        if not _under(protected, base) or protected == base:
            continue
        below = protected[len(base) :].strip("/").split("/")
        if not recursive:
            below = below[:1]
        for depth, component in enumerate(below, start=1):
            # An entry right below the walk's root named by one plain word (``tests``
            # under ``/``, ``logs`` under the home) is what an honest search for its
            # own folders names too; a deeper one, or a distinctive name, is not.
            if depth == 1 and recursive and component.isalpha():
                continue
            if any(_names(name, component) for name in names):
                prefix = "/".join(
                    [base.rstrip("/"), *protected[len(base) :].strip("/").split("/")[:depth]]
                )
                reached = protected if recursive else prefix
                if reached not in found:
                    found.append(reached)
                break
        if len(found) >= MAX_REACHED:
            break
    if recursive:
        # A recursive walk looking for a file Harbor's layout holds, by its exact name
        # (``os.walk('/')`` with ``'test_outputs.py' in files``).
        for protected, members in _MOUNTED_MEMBERS.items():
            if not _under(protected, base) or protected == base:
                continue
            for member in members:
                reached = f"{protected}/{member}"
                if member in names and reached not in found and len(found) < MAX_REACHED:
                    found.append(reached)
    return found


def _names(name: str, component: str) -> bool:
    """A program's constant names a path component: equal, one of its dash-separated
    words, or a part of it of at least five letters (``'contr' in root``)."""
    if name == component or name in component.split("-"):
        return True
    return len(name) >= 5 and name.replace("-", "").isalnum() and name in component


# Commands that print the files they are handed: a ``find`` whose results go to one of
# them (``-exec cat {} +``, ``| xargs head``) reads what it found, not only lists it.
_CONTENT_READERS = frozenset({
    "cat", "tac", "head", "tail", "less", "more", "bat", "batcat", "nl", "strings", "xxd",
    "od", "hexdump", "base64", "cp", "tar", "zip", "rsync", "python", "python3", "bash", "sh",
})  # fmt: skip
_EXEC_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_NEGATIONS = frozenset({"!", "-not"})
_COMMAND_ENDS = frozenset({";", "&&", "||", "&", "\n", "(", ")", ";;", "|&"})
_XARGS_VALUED = frozenset({"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"})


def find_reach(
    tokens: Sequence[str],
    absolute: Callable[[str], str | None],
    roots: Sequence[str],
) -> list[str]:
    """Roots a ``find`` command among ``tokens`` can reach: under one of its start
    directories (``absolute`` spells a word as the roots are spelled, or ``None``) and
    matched by one of its ``-path`` or ``-name`` tests."""
    found: list[str] = []
    for start in range(len(tokens)):
        if tokens[start].rsplit("/", 1)[-1] != "find":
            continue
        starts: list[str] = []
        tests: list[tuple[str, str]] = []
        required: list[tuple[str, str]] = []  # positive -path tests every result passes
        maxdepth: int | None = None
        alternatives = False
        position = start + 1
        while position < len(tokens) and not tokens[position].startswith("-"):
            if tokens[position] == ";":
                break
            spelled = absolute(tokens[position])
            if spelled is not None:
                starts.append(spelled.rstrip("/") or "/")
            position += 1
        expression_start = position
        # The shell's tokens spell every operator ``;``: a ``(`` here is find's own
        # escaped grouping (``\( -name a -o -name b \)``).
        while position + 1 < len(tokens) and tokens[position] != ";":
            token = tokens[position]
            if token in {"-o", "-or"}:
                alternatives = True
            if token == "-maxdepth" and tokens[position + 1].isdigit():
                maxdepth = int(tokens[position + 1])
            if token in _FIND_PATH_TESTS | _FIND_NAME_TESTS:
                negated = tokens[position - 1] in _NEGATIONS
                if not negated:
                    # A negated test (``-not -path '*/site-packages/*'``) excludes what
                    # it names: it reaches nothing.
                    tests.append((token, tokens[position + 1]))
                    if token in _FIND_PATH_TESTS:
                        required.append((token, tokens[position + 1]))
                position += 1
            position += 1
        reads = _results_read(tokens, expression_start, position) or _substituted_into_reader(
            tokens, start
        )
        for root in roots:
            if not any(_under(root, base) for base in starts):
                continue
            bases = [base for base in starts if _under(root, base)]
            hit = _tested(root, bases, tests, wide=reads)
            if hit is None or hit in found:
                continue
            if maxdepth is not None and all(_depth(hit, base) > maxdepth for base in bases):
                continue
            if (
                reads
                and not alternatives
                and not all(_match(hit, value, test.startswith("-i")) for test, value in required)
            ):
                continue
            found.append(hit)
            if len(found) >= MAX_REACHED:
                return found
    return found


def _depth(path: str, base: str) -> int:
    below = path[len(base.rstrip("/")) :].strip("/")
    return len(below.split("/")) if below else 0


def _results_read(tokens: Sequence[str], begin: int, end: int) -> bool:
    """Whether the ``find`` whose expression is ``tokens[begin:end]`` hands its results
    to a command that prints them: an ``-exec`` of a reader (or of ``sh -c`` whose
    string runs one), or a pipe into ``xargs`` running a reader."""
    for position in range(begin, min(end + 1, len(tokens) - 1)):
        if tokens[position] in _EXEC_ACTIONS and _reader(tokens, position + 1):
            return True
    # The shell's tokens spell every operator ``;``: the next command, past a
    # redirection's pieces (``2>/dev/null``), is taken as the pipe's end.
    position = end
    for _ in range(6):
        if position >= len(tokens):
            return False
        token = tokens[position]
        if token == "xargs":
            position += 1
            while position < len(tokens) and tokens[position].startswith("-"):
                position += 2 if tokens[position] in _XARGS_VALUED else 1
            return _reader(tokens, position)
        if token not in _COMMAND_ENDS and not token.isdigit() and not token.startswith("/dev/"):
            return False
        position += 1
    return False


def _substituted_into_reader(tokens: Sequence[str], start: int) -> bool:
    """Whether the ``find`` at ``tokens[start]`` runs in a ``$(...)`` whose words a
    reader prints: ``cat $(find ...)``, or ``for f in $(find ...); do cat "$f"; done``
    (the shell's tokens spell ``$(`` as ``$``, ``;``)."""
    if start < 2 or tokens[start - 1] != ";" or tokens[start - 2] != "$":
        return False
    before = start - 3
    while before >= 0 and (tokens[before].startswith("-") or tokens[before].isdigit()):
        before -= 1
    if before >= 0 and tokens[before] == "in" and before >= 2 and tokens[before - 2] == "for":
        variable = "$" + tokens[before - 1]
        body = tokens[start + 1 : start + 40]
        if "do" not in body:
            return False
        at = body.index("do") + 1
        while at < len(body) and body[at] != "done":
            if _reader(body, at) and any(variable in word for word in body[at + 1 : at + 4]):
                return True
            at += 1
        return False
    return before >= 0 and _reader(tokens, before)


def _reader(tokens: Sequence[str], position: int) -> bool:
    if position >= len(tokens):
        return False
    command = tokens[position].rsplit("/", 1)[-1]
    if (
        command in {"sh", "bash", "dash", "zsh"}
        and position + 2 < len(tokens)
        and tokens[position + 1].startswith("-")
        and "c" in tokens[position + 1]
    ):
        script = tokens[position + 2].replace(";", " ").replace("|", " ").split()
        return any(word.rsplit("/", 1)[-1] in _CONTENT_READERS for word in script)
    return command in _CONTENT_READERS


def _under(root: str, base: str) -> bool:
    return base == "/" or root == base or root.startswith(base + "/")


def _tested(
    root: str, bases: Sequence[str], tests: Sequence[tuple[str, str]], *, wide: bool = False
) -> str | None:
    """The root, or the directory above it, that one of ``tests`` matches; or a file of
    the root's that a ``-name`` test names (:data:`_MOUNTED_MEMBERS`). ``wide``: the
    results are read, so a name as wide as ``test_*.py`` reaches a member too."""
    parts = root.split("/")
    for test, value in tests:
        fold = test.startswith("-i")
        if test in _FIND_NAME_TESTS:
            member = _member_named(root, value, fold, wide=wide)
            if member is not None and any(_under(root, base) for base in bases):
                return member
        for depth in range(len(parts), 0, -1):
            prefix = "/".join(parts[:depth])
            if not any(_under(prefix, base) and prefix != base for base in bases):
                continue
            if test in _FIND_PATH_TESTS:
                if not _literal(value):
                    continue
                if wide and depth == len(parts):
                    # what it finds is read: a -path naming the root's files
                    # (``-path '*/tests/*.py'``) reaches them
                    for member in _MOUNTED_MEMBERS.get(root, ()):
                        if _match(f"{root}/{member}", value, fold):
                            return f"{root}/{member}"
                if _match(prefix, value, fold) or _match(prefix + "/", value, fold):
                    return prefix
            else:
                literals = sum(1 for ch in value if ch not in _WILDCARDS)
                # A leading wildcard is a wide search, unless what it finds is read and
                # the name's literal part is a word of its own (``*oracle*``).
                leading = value[:1] in "*?[" and not (wide and literals >= 5)
                if leading or literals < _MIN_NAME_LITERALS:
                    continue
                if _match(parts[depth - 1], value, fold):
                    return prefix
    return None


def _member_named(root: str, pattern: str, fold: bool, *, wide: bool = False) -> str | None:
    """``root/member`` for a known member of a mounted root that ``pattern`` matches,
    when the pattern has three literal characters and matches no ordinary name (or,
    ``wide``, when what it finds is read: listing every ``test_*.py`` is a search,
    printing them all prints the grader's)."""
    members = _MOUNTED_MEMBERS.get(root, ())
    if not members or sum(1 for ch in pattern if ch not in _WILDCARDS) < _MIN_NAME_LITERALS:
        return None
    if not wide and any(_match(name, pattern, fold) for name in _ORDINARY_NAMES):
        return None
    for member in members:
        if _match(member, pattern, fold):
            return f"{root}/{member}"
    return None


def _match(text: str, pattern: str, fold: bool) -> bool:
    if fold:
        return fnmatch.fnmatchcase(text.lower(), pattern.lower())
    return fnmatch.fnmatchcase(text, pattern)
