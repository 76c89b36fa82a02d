"""Programs that write files the check cannot name, or run a file given to them.

Each reader gets the program's arguments and a :class:`Checker`; it raises
:class:`WorkspaceCode` when the program would write names only the agent's input
decides (a diff, an archive's members) or start code the check does not fix (a
loader's program, a CMake script, an OpenSSL engine, a package's maintainer scripts),
and hands a file the program runs to ``checker.script`` (a grading file passes).
Programs that write a file an option or operand names (``pandoc -o``, ``openssl -out``,
``objcopy IN OUT``, ``tar -cf``, ``touch``, ...) hand it to ``checker.not_onto_grading``.

Why these are refused rather than bounded: a diff can create, rename or delete any
file (GNU patch runs ``ed`` for an ed-style diff), and an archive's members are named
by the agent, so either can replace the task's grader before it runs; only listing or
testing them reads them as data.

This module keeps the loaders, CMake, dpkg and the installers, the generic
output-option/operand rules and the dispatch (``output_files``); the per-program
readers live in ``program_writers_archives`` (archives, diffs, decompressors) and
``program_writers_documents`` (document, crypto, download and binutils tools), with the
shared word helpers in ``program_writers_args``, and are re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from benchguard.harness.program_options import Checker, WorkspaceCode
from benchguard.harness.program_writers_archives import (
    DECOMPRESSORS,
    EXTRACTORS,
    archive_tool,
    cpio,
    decompressor,
    extractor,
    patch,
    tar_archive,
    uudecode,
    zip_archive,
)
from benchguard.harness.program_writers_args import abbreviates, option_values, short_value
from benchguard.harness.program_writers_documents import (
    BINUTILS,
    binutils,
    curl,
    gpg,
    openssl,
    pandoc,
    tidy,
    xsltproc,
)

# Re-exported: check_programs reads every family through this module.
__all__ = [
    "DECOMPRESSORS",
    "EXTRACTORS",
    "INSTALLERS",
    "LOADER_RE",
    "archive_tool",
    "cmake",
    "cpio",
    "decompressor",
    "dpkg",
    "extractor",
    "installer",
    "ldd",
    "loader",
    "openssl",
    "output_files",
    "patch",
    "tar_archive",
]

# The dynamic loader, by any of its names: it runs the program it is given.
LOADER_RE = re.compile(r"ld(-linux[\w.-]*|-musl[\w.-]*|64)?\.so(\.[\d.]+)?$|ld-[\d.]+\.so$")
# Package installers, not modelled at all (fail closed).
INSTALLERS = {
    "rpm", "apt", "apt-get", "aptitude", "dnf", "yum", "apk", "pacman", "zypper", "snap",
    "flatpak", "gem", "conda", "mamba", "micromamba", "brew", "cpan", "cpanm", "luarocks",
    "opam", "nix-env", "installer",
}  # fmt: skip
# dpkg's actions that only read its database or a package file.
_DPKG_READ = {"-c", "--contents", "-I", "--info", "-l", "--list", "-L", "--listfiles"}
_DPKG_READ |= {"-s", "--status", "-S", "--search", "-f", "--field", "--print-architecture"}
_DPKG_READ |= {"--version", "--help"}
# cmake -E commands that only read or print.
_CMAKE_E_READ = {"compare_files", "sha1sum", "sha224sum", "sha256sum", "sha384sum"}
_CMAKE_E_READ |= {"sha512sum", "md5sum", "echo", "echo_append", "true", "false", "cat"}
_CMAKE_E_READ |= {"capabilities"}


def loader(checker: Checker, name: str, args: Sequence[str]) -> None:
    """The dynamic loader runs its first operand; its options load libraries."""
    if args and args[0].startswith("-"):
        raise WorkspaceCode(
            f"{name} {args[0]}: the loader's options load libraries or audit modules "
            "(--library-path, --preload, --audit), which the check cannot see"
        )
    if not args:
        raise WorkspaceCode(f"{name} without a program is not understood")
    checker.script(args[0], f"the program given to the loader {name}")


def ldd(checker: Checker, args: Sequence[str]) -> None:
    # ldd runs the loader on the file, and a program's own PT_INTERP is that loader.
    operands = [a for a in args if not a.startswith("-")]
    if not operands:
        raise WorkspaceCode("ldd without a program is not understood")
    for operand in operands:
        checker.script(operand, "the program given to ldd (it runs the program's loader)")


def cmake(checker: Checker, args: Sequence[str]) -> None:
    """cmake -P runs a script; configuring runs CMakeLists.txt; -E is read per command."""
    if args[:1] == ["-E"]:
        if len(args) > 1 and args[1] in _CMAKE_E_READ:
            return
        raise WorkspaceCode(
            f"cmake -E {args[1] if len(args) > 1 else ''} is not known to only read "
            f"(allowed: {', '.join(sorted(_CMAKE_E_READ))})"
        )
    if args[:1] == ["-P"] and len(args) > 1:
        checker.script(args[1], "the script given to cmake -P")
        return
    raise WorkspaceCode(
        "cmake runs CMake code (the workspace's CMakeLists.txt, or the -P script); give "
        "-P with a grading file, or -E compare_files"
    )


def dpkg(_checker: Checker, args: Sequence[str]) -> None:
    action = next((a for a in args if a.startswith("-")), "")
    if action.split("=", 1)[0] not in _DPKG_READ:
        raise WorkspaceCode(
            f"dpkg {action or '(no action)'} installs or changes packages, running their "
            "maintainer scripts (a workspace .deb is the agent's code); only its "
            "query actions (-c, -I, -l, -L, -s, -S, -f) are allowed"
        )


def installer(name: str) -> None:
    raise WorkspaceCode(
        f"{name!r} installs packages, running their scripts (a workspace package is the "
        "agent's code), so it is refused in a check"
    )


# Programs whose output file is an option's value: none may write over a grading path
# (iconv -o grade.py answer.txt && python3 grade.py runs what the agent wrote).
_OUTPUT_OPTIONS: dict[str, tuple[str, ...]] = {
    "iconv": ("-o", "--output"),
    "shuf": ("-o", "--output"),
    "wget": ("-O", "--output-document"),
    "csplit": ("-f", "--prefix"),
}
# Programs whose output file is an operand (its index among the operands), and the
# short options that take a value (so their values are not counted as operands).
_OUTPUT_OPERANDS: dict[str, tuple[int, str]] = {
    "uniq": (1, "fsw"),
    "xxd": (1, "cglosnC"),
    "split": (1, "abClnt"),
    "sponge": (0, ""),
}


def output_files(checker: Checker, name: str, args: Sequence[str]) -> None:
    """Hand the file ``name`` writes (an option's value, or its output operand) to
    ``checker.not_onto_grading``; other programs are left alone."""
    if name in _TAIL_READERS:
        _TAIL_READERS[name](checker, name, args)
    elif name in _OUTPUT_OPTIONS:
        for target in option_values(args, _OUTPUT_OPTIONS[name]):
            checker.not_onto_grading(target, f"{name}'s output")
    elif name in _OUTPUT_OPERANDS:
        index, valued = _OUTPUT_OPERANDS[name]
        operands = _operands(args, valued)
        if len(operands) > index:
            checker.not_onto_grading(operands[index], f"{name}'s output")


def _operands(args: Sequence[str], valued: str) -> list[str]:
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            operands.extend(args[i + 1 :])
            break
        if arg.startswith("-") and len(arg) > 1:
            # -f 2 takes the next word; -f2 and --skip-fields=2 hold their value.
            if not arg.startswith("--") and arg[-1] in valued and len(arg) == 2:
                i += 1
        else:
            operands.append(arg)
        i += 1
    return operands


def touch(checker: Checker, args: Sequence[str]) -> None:
    """touch creates each operand that does not exist (an empty tests/__init__.py or
    conftest.py changes what pytest imports); -r's file is only read."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            for operand in args[i + 1 :]:
                checker.not_onto_grading(operand, "touch")
            return
        if arg.startswith("--"):
            option, equals, _ = arg[2:].partition("=")
            if not equals and any(abbreviates(option, o) for o in ("date", "reference", "time")):
                i += 1
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in "drt":
                    i = short_value(args, i, j)[1] - 1
                    break
        else:
            checker.not_onto_grading(arg, "touch")
        i += 1


_TAIL_READERS: dict[str, Callable[[Checker, str, Sequence[str]], None]] = {
    "pandoc": pandoc,
    "pandoc-lua": pandoc,
    "pandoc-server": pandoc,
    "xsltproc": lambda checker, _name, args: xsltproc(checker, args),
    "tidy": lambda checker, _name, args: tidy(checker, args),
    "gpg": gpg,
    "gpg2": gpg,
    "gpgv": gpg,
    "uudecode": lambda checker, _name, args: uudecode(checker, args),
    "touch": lambda checker, _name, args: touch(checker, args),
    "zip": lambda checker, _name, args: zip_archive(checker, args),
    "curl": lambda checker, _name, args: curl(checker, args),
    **dict.fromkeys(BINUTILS, binutils),
}
