"""Archive, diff and compressed-file tools for the program-writer vetting.

patch, cpio, 7z/unrar/ar/pax, the unmodelled extractors, the decompressors, uudecode,
tar and zip: each either writes names the agent's input chose (refused) or writes an
archive or output file an option or operand names (handed to ``checker.not_onto_grading``).
Kept apart from ``program_writers`` so each reader family stays small; it is re-exported there.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from benchguard.harness.program_options import Checker, WorkspaceCode
from benchguard.harness.program_writers_args import abbreviates, option_values, short_value

# Archive tools not modelled beyond their listing modes: the first operand (7z, unrar)
# or the first word's letters (ar) say the mode.
_LISTING_COMMANDS = {
    "7z": {"l", "t"},
    "7za": {"l", "t"},
    "7zr": {"l", "t"},
    "unrar": {"l", "lt", "t"},
}
_AR_READ = set("tpvO")
# Extractors not modelled at all (fail closed).
EXTRACTORS = {"unar", "lha", "unsquashfs", "cabextract", "bsdcpio", "jar", "dpkg-deb"}

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


def extractor(name: str) -> None:
    raise WorkspaceCode(
        f"{name} extracts or runs an archive's contents in ways not modelled here "
        f"(names the check cannot know, over the grading files); {_EXTRACT_ADVICE}"
    )


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
    targets = option_values(args, ("-o", "--output"))
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


def uudecode(checker: Checker, args: Sequence[str]) -> None:
    """uudecode writes the name in the file's ``begin`` line, which the agent wrote,
    unless -o/--output-file names the file."""
    targets: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        if arg.startswith("--"):
            option, equals, value = arg[2:].partition("=")
            if abbreviates(option, "output-file"):
                if not equals:
                    value, i = (args[i + 1] if i + 1 < len(args) else ""), i + 1
                targets.append(value)
        elif arg.startswith("-") and len(arg) > 1 and "o" in arg:
            value, following = short_value(args, i, arg.index("o"))
            targets.append(value)
            i = following - 1
        i += 1
    if not targets:
        raise WorkspaceCode(
            "uudecode writes the file named inside its input (the agent chose it, and it "
            "can be a grading file); give -o with the file to write (-o /dev/stdout)"
        )
    for target in targets:
        checker.not_onto_grading(target, "uudecode -o")


# GNU tar's short options that take a value; the modes that write the archive, and
# the long options naming a file tar writes whatever the mode.
_TAR_VALUED = set("bCfFgHIKLNTVX")
_TAR_WRITE_MODES = ("create", "append", "update", "concatenate", "catenate", "delete")
_TAR_READ_MODES = ("list", "extract", "get", "diff", "compare", "test-label")
_TAR_WRITTEN = ("listed-incremental", "index-file", "volno-file")


def tar_archive(checker: Checker, args: Sequence[str]) -> None:
    """tar -c/-r/-u/-A/--delete write the -f archive (``tar -cf grade.py x``); -g, the
    index and volume files are written in any mode."""
    archives: list[str] = []
    modes: set[str] = set()
    skip: set[int] = set()
    for index, arg in enumerate(args):
        if index in skip:
            continue
        if arg == "--":
            break
        following = args[index + 1] if index + 1 < len(args) else ""
        if arg.startswith("--"):
            option, equals, value = arg[2:].partition("=")
            if not equals and (
                abbreviates(option, "file") or any(abbreviates(option, o) for o in _TAR_WRITTEN)
            ):
                value = following
                skip.add(index + 1)
            if abbreviates(option, "file"):
                archives.append(value)
            for written in _TAR_WRITTEN:
                if abbreviates(option, written):
                    checker.not_onto_grading(value, f"tar --{written}")
            modes |= {"write" for m in _TAR_WRITE_MODES if len(option) > 1 and m.startswith(option)}
            modes |= {"read" for m in _TAR_READ_MODES if len(option) > 1 and m.startswith(option)}
            continue
        if arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            for j, letter in enumerate(letters, start=1):
                modes |= {"write"} if letter in "cruA" else {"read"} if letter in "txd" else set()
                if letter in _TAR_VALUED:
                    value, following_index = short_value(args, index, j)
                    skip |= set(range(index + 1, following_index))
                    _tar_value(checker, letter, value, archives)
                    break
        elif index == 0:
            # The old style ('cf grade.py x'): each letter's value is the next word.
            taken = 1
            for letter in arg:
                modes |= {"write"} if letter in "cruA" else {"read"} if letter in "txd" else set()
                if letter in _TAR_VALUED:
                    _tar_value(checker, letter, args[taken] if taken < len(args) else "", archives)
                    skip.add(taken)
                    taken += 1
    if modes != {"read"}:
        for archive in archives:
            checker.not_onto_grading(archive, "tar -f (the archive it writes)")


def _tar_value(checker: Checker, letter: str, value: str, archives: list[str]) -> None:
    if letter == "f":
        archives.append(value)
    elif letter == "g":
        checker.not_onto_grading(value, "tar -g (the snapshot file it writes)")


# zip's options that take a value (-i and -x take patterns up to the next option; the
# later ones are read as names to add, which zip only reads unless -m).
_ZIP_VALUED = {"b", "n", "t", "tt", "Z", "P", "s", "ds", "O", "lf", "i", "x", "TT"}
_ZIP_LONG_VALUED = ("out", "temp-path", "suffixes", "logfile-path", "unzip-command")


def zip_archive(checker: Checker, args: Sequence[str]) -> None:
    """zip writes its first operand (``x.zip`` when it has no suffix): over grade.py,
    a zip python runs by its __main__.py; --out/-O and -lf write too, -m deletes the
    names it adds, -TT runs a command."""
    operands: list[str] = []
    move = False
    i = 0
    while i < len(args):
        arg = args[i]
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg == "--":
            operands += args[i + 1 :]
            break
        if arg.startswith("--"):
            option, equals, value = arg[2:].partition("=")
            found = [o for o in _ZIP_LONG_VALUED if abbreviates(option, o)]
            if found and not equals:
                value, i = following, i + 1
            if "unzip-command" in found:
                raise WorkspaceCode("zip --unzip-command runs a command to test the archive")
            if "out" in found or "logfile-path" in found:
                checker.not_onto_grading(value, f"zip --{found[0]}")
            move |= option == "move"
        elif arg.startswith("-") and len(arg) > 1:
            word = arg[1:]
            if word == "TT":
                raise WorkspaceCode("zip -TT runs a command to test the archive")
            letters = [word] if word in _ZIP_VALUED else list(word)
            for letter in letters:
                if letter in _ZIP_VALUED:
                    if letter in ("O", "lf"):
                        checker.not_onto_grading(following, f"zip -{letter}")
                    i += 1
                    break
                move |= letter == "m"
        else:
            operands.append(arg)
        i += 1
    if operands:
        archive = operands[0]
        checker.not_onto_grading(archive, "zip (its archive)")
        if "." not in posixpath.basename(archive):
            checker.not_onto_grading(archive + ".zip", "zip (its archive)")
    if move:
        for operand in operands[1:]:
            checker.not_onto_grading(operand, "zip -m (it deletes what it adds)")
