"""Programs that write files the check cannot name, or run a file given to them.

Each reader gets the program's arguments and a :class:`Checker`; it raises
:class:`WorkspaceCode` when the program would write names only the agent's input
decides (a diff, an archive's members) or start code the check does not fix (a
loader's program, a CMake script, an OpenSSL engine, a package's maintainer scripts),
and hands a file the program runs to ``checker.script`` (a grading file passes).

Why these are refused rather than bounded: a diff can create, rename or delete any
file (GNU patch runs ``ed`` for an ed-style diff), and an archive's members are named
by the agent, so either can replace the task's grader before it runs; only listing or
testing them reads them as data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from benchguard.harness.program_options import Checker, WorkspaceCode

# The dynamic loader, by any of its names: it runs the program it is given.
LOADER_RE = re.compile(r"ld(-linux[\w.-]*|-musl[\w.-]*|64)?\.so(\.[\d.]+)?$|ld-[\d.]+\.so$")
# Archive tools not modelled beyond their listing modes: the first operand (7z, unrar)
# or the first word's letters (ar) say the mode.
_LISTING_COMMANDS = {
    "7z": {"l", "t"},
    "7za": {"l", "t"},
    "7zr": {"l", "t"},
    "unrar": {"l", "lt", "t"},
}
_AR_READ = set("tpvO")
# Extractors and package installers not modelled at all (fail closed).
EXTRACTORS = {"unar", "lha", "unsquashfs", "cabextract", "bsdcpio", "jar", "dpkg-deb"}
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
# openssl options that load code: an engine or provider module, or a config file
# (which can name both).
_OPENSSL_LOADS = {"-engine", "-keyengine", "-provider", "-provider-path", "-config", "-conf"}
_OPENSSL_LOADS |= {"-ssl_client_engine", "-keyform"}
_EXTRACT_ADVICE = "list or test the archive's members, or grade the agent's files directly"


def patch(_checker: Checker, _args: Sequence[str]) -> None:
    raise WorkspaceCode(
        "patch applies the agent's diff, which can create, rename or delete any file "
        "(the grading files included; GNU patch runs ed for an ed-style diff); apply "
        "it in the agent's run, or read the diff as data (grep, diff)"
    )


def cpio(checker: Checker, args: Sequence[str]) -> None:
    """cpio -i extracts and -p copies a tree: names from the agent's input."""
    for arg in args:
        long = arg.startswith("--")
        if (long and arg[2:].split("=", 1)[0] in ("extract", "pass-through")) or (
            # The mode letter can sit anywhere in a cluster (-vid, -dumpv).
            arg.startswith("-") and not long and set(arg[1:]) & {"i", "p"}
        ):
            raise WorkspaceCode(
                f"cpio {arg} writes the archive's members here, names the check cannot "
                f"know, which can replace the task's grading files; {_EXTRACT_ADVICE} "
                "(cpio -t)"
            )
        if not arg.startswith("-"):
            checker.not_onto_grading(arg, "cpio")


def archive_tool(name: str, args: Sequence[str]) -> None:
    """7z/unrar by their command word, ar by its letters, pax by -r; others refused."""
    if name in _LISTING_COMMANDS:
        command = next((a for a in args if not a.startswith("-")), "")
        if command in _LISTING_COMMANDS[name]:
            return
    elif name == "ar":
        letters = args[0].lstrip("-") if args else ""
        if letters and set(letters) <= _AR_READ:
            return
    elif name == "pax" and not any(
        a.startswith("-") and set(a[1:]) & {"r", "w", "s"} for a in args
    ):
        return  # pax's default mode lists
    raise WorkspaceCode(
        f"{name} extracts or writes an archive's members here, names the check cannot "
        f"know, which can replace the task's grading files; {_EXTRACT_ADVICE}"
    )


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


def openssl(_checker: Checker, args: Sequence[str]) -> None:
    if args[:1] == ["engine"]:
        raise WorkspaceCode("openssl engine loads an engine module, which can be a workspace file")
    for arg in args:
        if arg.split("=", 1)[0] in _OPENSSL_LOADS:
            raise WorkspaceCode(
                f"openssl {arg} loads an engine, a provider or a config naming them: "
                "a shared library the check cannot see"
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


def extractor(name: str) -> None:
    raise WorkspaceCode(
        f"{name} extracts or runs an archive's contents in ways not modelled here "
        f"(names the check cannot know, over the grading files); {_EXTRACT_ADVICE}"
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
}


def output_files(checker: Checker, name: str, args: Sequence[str]) -> None:
    """Hand the file ``name`` writes (an option's value, or its output operand) to
    ``checker.not_onto_grading``; other programs are left alone."""
    if name in _OUTPUT_OPTIONS:
        for target in _option_values(args, _OUTPUT_OPTIONS[name]):
            checker.not_onto_grading(target, f"{name}'s output")
    elif name in _OUTPUT_OPERANDS:
        index, valued = _OUTPUT_OPERANDS[name]
        operands = _operands(args, valued)
        if len(operands) > index:
            checker.not_onto_grading(operands[index], f"{name}'s output")


def _option_values(args: Sequence[str], options: tuple[str, ...]) -> list[str]:
    short = [o for o in options if not o.startswith("--")]
    long = [o for o in options if o.startswith("--")]
    values: list[str] = []
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg in options:
            values.append(following)
        elif any(arg.startswith(o + "=") for o in long):
            values.append(arg.partition("=")[2])
        elif any(
            arg.startswith(o) and len(arg) > len(o) and not arg.startswith("--") for o in short
        ):
            values.append(arg[2:])
    return values


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


# Decompressors: each writes every operand minus its suffix (gunzip grade.py.gz writes
# grade.py), or the -o file; with -c/--stdout (or as zcat) they write standard output.
DECOMPRESSORS = {
    "gunzip": "", "bunzip2": "", "unxz": "", "unlzma": "", "unzstd": "", "unlz4": "",
    "gzip": "d", "bzip2": "d", "xz": "d", "lzma": "d", "zstd": "d", "lz4": "d",
    "brotli": "d", "pigz": "d", "pbzip2": "d", "lzip": "d",
}  # fmt: skip
_FLAGS = re.compile(r"-[A-Za-z0-9]+")
_COMPRESSED_SUFFIX = re.compile(r"\.(gz|z|tgz|taz|bz2|tbz2?|xz|txz|lzma|tlz|zst|lz4|br|lz)$")


def decompressor(checker: Checker, name: str, args: Sequence[str]) -> None:
    """``gunzip grade.py.gz`` writes grade.py: each output name is handed to
    ``checker.not_onto_grading``; a mode other than decompressing is left alone."""
    # Flag clusters only: -oFILE holds a value, whose letters are not flags.
    letters = "".join(a[1:] for a in args if _FLAGS.fullmatch(a) and not a.startswith("-o"))
    longs = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    if DECOMPRESSORS[name] and "d" not in letters and not longs & {"--decompress", "--uncompress"}:
        return
    if "c" in letters or longs & {"--stdout", "--to-stdout"}:
        return
    if name in ("gzip", "gunzip", "pigz") and ("N" in letters or "--name" in longs):
        raise WorkspaceCode(
            f"{name} -N writes under the name stored in the archive, which the agent chose"
        )
    targets = _option_values(args, ("-o", "--output"))
    for target in targets:
        checker.not_onto_grading(target, f"{name} -o")
    if targets:
        return
    operands = [a for a in args if not a.startswith("-")]
    if name == "lz4" and len(operands) > 1:
        checker.not_onto_grading(operands[1], f"{name}'s output")
        return
    for operand in operands:
        output = _COMPRESSED_SUFFIX.sub("", operand)
        if output != operand:
            checker.not_onto_grading(output, f"{name} -d")
