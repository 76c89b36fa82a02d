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
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence

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
# openssl options naming a file it writes (-signer: the signers' certificates when
# verifying; -srpvfile: the verifier file srp edits). Any other option ending in "out"
# is taken for one too, but for these flags and -passout (a password source).
_OPENSSL_WRITES = {"out", "keyout", "certout", "certsout", "writerand", "msgfile"}
_OPENSSL_WRITES |= {"keylogfile", "sess_out", "reqout", "rspout", "respout", "chainout"}
_OPENSSL_WRITES |= {"extracertsout", "cacertsout", "signer", "outdir", "CAserial", "srpvfile"}
_OPENSSL_NOT_OUTPUTS = {"noout", "pubout", "pk7out", "trustout", "token_out", "param_out"}
_OPENSSL_NOT_OUTPUTS |= {"data_out", "cmsout", "passout"}
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


def openssl(checker: Checker, args: Sequence[str]) -> None:
    """openssl's options load code (an engine, a provider, a config) or name a file it
    writes (``-out``, ``-keyout``, ``-writerand``, ...). Its parser takes ``--name``
    for ``-name`` and ``-name=value`` for ``-name value``."""
    if args[:1] == ["engine"]:
        raise WorkspaceCode("openssl engine loads an engine module, which can be a workspace file")
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if not arg.startswith("-") or arg == "-":
            continue
        name, equals, value = arg.lstrip("-").partition("=")
        if "-" + name in _OPENSSL_LOADS:
            raise WorkspaceCode(
                f"openssl {arg} loads an engine, a provider or a config naming them: "
                "a shared library the check cannot see"
            )
        if name in _OPENSSL_WRITES or (
            name.endswith("out") and name not in _OPENSSL_NOT_OUTPUTS and "timeout" not in name
        ):
            target = value if equals else (args[i + 1] if i + 1 < len(args) else "")
            checker.not_onto_grading(target, f"openssl -{name}")


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
    "sponge": (0, ""),
}


def output_files(checker: Checker, name: str, args: Sequence[str]) -> None:
    """Hand the file ``name`` writes (an option's value, or its output operand) to
    ``checker.not_onto_grading``; other programs are left alone."""
    if name in _TAIL_READERS:
        _TAIL_READERS[name](checker, name, args)
    elif name in _OUTPUT_OPTIONS:
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


# The long tail of programs that write a file an option or operand names (issue 19):
# each reader hands every file the program would write to ``checker.not_onto_grading``
# and every file it would load as code to ``checker.script``. Long options match by
# any prefix (getopt's abbreviations, fail closed: ``--out`` is ``--output``).


def _abbreviates(name: str, option: str) -> bool:
    return bool(name) and option.startswith(name)


def _short_value(args: Sequence[str], i: int, j: int) -> tuple[str, int]:
    """The value of the short option at ``args[i][j]``: the rest of its word, else the
    next word; and the index of the word after it."""
    rest = args[i][j + 1 :]
    if rest:
        return rest, i + 1
    return (args[i + 1] if i + 1 < len(args) else ""), i + 2


# pandoc's short options that take a value, and those read here (by their long name).
_PANDOC_VALUED = set("frtwodMVDABHcTFL")
_PANDOC_SHORT = {"o": "output", "d": "defaults", "F": "filter", "L": "lua-filter"}
_PANDOC_SHORT |= {"f": "from", "r": "read", "t": "to", "w": "write"}
_PANDOC_LONG: tuple[str, ...] = (
    "output",
    "log",
    "extract-media",
    "filter",
    "lua-filter",
    "defaults",
)
_PANDOC_LONG += ("from", "read", "to", "write", "data-dir", "pdf-engine", "pdf-engine-opt")


def pandoc(checker: Checker, name: str, args: Sequence[str]) -> None:
    """pandoc writes -o/--output, --log and the media --extract-media takes from the
    document; it runs --filter and --lua-filter programs (found in the working
    directory first), a custom Lua reader or writer (``-t w.lua``), the filters a
    --defaults file names and --data-dir's init.lua; ``pandoc lua`` is Lua."""
    if name != "pandoc" or args[:1] in (["lua"], ["server"]):
        raise WorkspaceCode(f"{' '.join([name, *args[:1]])} runs Lua code or a server")
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        if arg.startswith("--"):
            option, equals, value = arg[2:].partition("=")
            found = [o for o in _PANDOC_LONG if o == option] or [
                o for o in _PANDOC_LONG if _abbreviates(option, o)
            ]
            if found and not equals:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            for long in found:
                _pandoc_option(checker, long, value)
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in _PANDOC_VALUED:
                    value, following = _short_value(args, i, j)
                    if letter in _PANDOC_SHORT:
                        _pandoc_option(checker, _PANDOC_SHORT[letter], value)
                    i = following - 1
                    break
        i += 1


def _pandoc_option(checker: Checker, option: str, value: str) -> None:
    what = f"pandoc --{option}"
    if option in ("output", "log", "extract-media"):
        checker.not_onto_grading(value, what)
    elif option in ("filter", "lua-filter"):
        checker.script(value, f"the filter given to {what} (a bare name is looked up here first)")
    elif option == "defaults":
        # -d x reads x.yaml; a defaults file can name filters.
        resolved = value if posixpath.splitext(value)[1] else value + ".yaml"
        checker.script(resolved, f"the defaults file given to {what} (it can name filters)")
    elif option == "data-dir":
        checker.script(value, f"the data directory given to {what} (its init.lua is run)")
    elif option in ("from", "read", "to", "write"):
        lua = re.search(r"\.lua", value, re.IGNORECASE)
        if lua:
            checker.script(value[: lua.end()], f"the custom Lua format given to {what}")
    elif option == "pdf-engine":
        if "/" in value:
            checker.script(value, f"the program given to {what}")
    elif option == "pdf-engine-opt":
        raise WorkspaceCode(
            f"{what} passes options to the PDF engine (-shell-escape lets the document "
            "run programs)"
        )


# xsltproc's options (by either one or two dashes) and how many values each takes.
_XSLTPROC_VALUED = {"o": 1, "output": 1, "maxdepth": 1, "maxvars": 1, "maxparserdepth": 1}
_XSLTPROC_VALUED |= {"seed-rand": 1, "encoding": 1, "path": 1, "writesubtree": 1}
_XSLTPROC_VALUED |= {"param": 2, "stringparam": 2}


def xsltproc(checker: Checker, args: Sequence[str]) -> None:
    """xsltproc writes -o/--output; its first operand is the stylesheet, a program
    (``exsl:document`` writes any file), or a document naming one by a processing
    instruction."""
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and len(arg) > 1:
            option, _, value = arg.lstrip("-").partition("=")
            count = _XSLTPROC_VALUED.get(option, 0)
            if option in ("o", "output"):
                checker.not_onto_grading(
                    value or (args[i + 1] if i + 1 < len(args) else ""), "xsltproc -o"
                )
            i += 1 + (0 if value else count)
            continue
        operands.append(arg)
        i += 1
    if operands:
        checker.script(operands[0], "the stylesheet given to xsltproc (it is a program)")


# binutils that rewrite the files they are given in place (objcopy IN [OUT], strip,
# ranlib, elfedit, patchelf): each operand is written, and their short options that
# surely take a value are skipped (one taken for a flag is only read as an operand).
_BINUTILS_VALUED = {"objcopy": set("IOBFjRNKLGWb"), "strip": set("IOFRNKo")}


def binutils(checker: Checker, name: str, args: Sequence[str]) -> None:
    """objcopy IN OUT writes OUT (IN when OUT is left out), strip every operand or -o,
    and --dump-section NAME=FILE writes FILE; every operand is checked, the input too."""
    valued = _BINUTILS_VALUED.get(name, set())
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            for operand in args[i + 1 :]:
                checker.not_onto_grading(operand, f"{name} (it rewrites its operands)")
            return
        if arg.startswith("--"):
            option, equals, value = arg[2:].partition("=")
            dump = name == "objcopy" and _abbreviates(option, "dump-section")
            output = _abbreviates(option, "output-file") or option == "output"
            if (dump or output) and not equals:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if dump:
                checker.not_onto_grading(value.partition("=")[2], f"{name} --dump-section")
            elif output:
                checker.not_onto_grading(value, f"{name} --output")
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in valued:
                    value, following = _short_value(args, i, j)
                    if letter == "o":
                        checker.not_onto_grading(value, f"{name} -o")
                    i = following - 1
                    break
        else:
            checker.not_onto_grading(arg, f"{name} (it rewrites its operands)")
        i += 1


BINUTILS = {"objcopy", "strip", "ranlib", "elfedit", "patchelf"}
# tidy's whole-word options that take a value (-o, -f and -config are read); any other
# single-dash word is read letter by letter (unknown ones skipped), m modifying in place.
_TIDY_VALUED = {"o", "output", "f", "file", "config", "wrap", "access"}
_TIDY_VALUED |= {"language", "help-option"}
# Its whole-word options with an m in them that are not -m.
_TIDY_WORDS = {"omit", "numeric", "xml", "asxml", "asxhtml", "ashtml", "mac", "ibm858"}
_TIDY_WORDS |= {"xml-help", "xml-config", "xml-strings", "xml-error-strings"}
_TIDY_WORDS |= {"xml-options-strings"}
_TIDY_FALSE = {"no", "n", "false", "f", "0"}


def tidy(checker: Checker, args: Sequence[str]) -> None:
    """tidy writes -o/-output, its error file (-f/-file, --error-file), and with -m,
    -modify or --write-back every file it reads; -config names a config that can say
    the same."""
    operands: list[str] = []
    in_place = False
    i = 0
    while i < len(args):
        arg = args[i]
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg.startswith("--"):
            # Every --name takes the next word as its value (--write-back yes).
            option = arg[2:].lower().replace("_", "-")
            if option in ("output-file", "error-file"):
                checker.not_onto_grading(following, f"tidy --{option}")
            elif option == "write-back":
                in_place |= following.lower() not in _TIDY_FALSE
            i += 2
            continue
        if arg.startswith("-") and len(arg) > 1:
            option = arg[1:].lower()
            if option in ("o", "output", "f", "file"):
                checker.not_onto_grading(following, f"tidy -{option}")
            elif option == "config":
                checker.script(
                    following, "the config given to tidy -config (it can set write-back)"
                )
            in_place |= option == "modify" or (
                "m" in option and option not in _TIDY_VALUED and option not in _TIDY_WORDS
            )
            i += 2 if option in _TIDY_VALUED else 1
            continue
        operands.append(arg)
        i += 1
    if in_place:
        for operand in operands:
            checker.not_onto_grading(operand, "tidy -m (it rewrites the files it reads)")


# gpg's commands that write nothing beside their operands (decrypt writes to standard
# output unless --multifile); any other writes each operand's .gpg, .asc or .sig twin
# (encrypt, sign, store, ...), or the operand without it (decrypting, no command).
_GPG_BESIDE_NONE = {"--verify", "--list-packets", "--list-keys", "--list-public-keys"}
_GPG_BESIDE_NONE |= {"--list-secret-keys", "--list-sigs", "--check-sigs", "--fingerprint"}
_GPG_BESIDE_NONE |= {"--print-md", "--print-mds", "--import", "--export", "--version"}
_GPG_BESIDE_NONE |= {"--help", "--show-keys", "--list-signatures", "--check-signatures"}
_GPG_BESIDE_NONE |= {"-k", "-K", "--verify-files"}
# gpg's short options that take a value (-u and -r name keys, -o the output).
_GPG_VALUED = set("urRzfFo")
_GPG_SUFFIX = re.compile(r"\.(gpg|pgp|asc|sig)$")


def gpg(checker: Checker, name: str, args: Sequence[str]) -> None:
    """gpg writes -o/--output, else beside each operand; --use-embedded-filename writes
    the name the message carries; --homedir and --options name its config, which can
    name programs (agent-program, photo-viewer)."""
    outputs = 0
    decrypting_to_stdout = False
    reads_only = name == "gpgv"
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            operands += args[i + 1 :]
            break
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg.startswith("--"):
            option, equals, value = arg[2:].partition("=")
            valued = [
                o
                for o in ("output", "homedir", "options")
                if option == o or _abbreviates(option, o)
            ]
            if _abbreviates(option, "use-embedded-filename"):
                raise WorkspaceCode(
                    f"{name} --use-embedded-filename writes under the name stored in the "
                    "message, which the agent chose"
                )
            if valued and not equals:
                value, i = following, i + 1
            for long in valued:
                if long == "output":
                    outputs += 1
                    checker.not_onto_grading(value, f"{name} --output")
                else:
                    checker.script(
                        value, f"the {long} given to {name} (its config can name programs)"
                    )
            reads_only |= arg in _GPG_BESIDE_NONE
            decrypting_to_stdout |= arg == "--decrypt"
        elif arg.startswith("-") and len(arg) > 1:
            reads_only |= arg in _GPG_BESIDE_NONE
            for j, letter in enumerate(arg[1:], start=1):
                if letter in _GPG_VALUED:
                    value, following_index = _short_value(args, i, j)
                    if letter == "o":
                        outputs += 1
                        checker.not_onto_grading(value, f"{name} -o")
                    i = following_index - 1
                    break
                decrypting_to_stdout |= letter == "d"
        else:
            operands.append(arg)
        i += 1
    multifile = any(a.startswith("--multi") or a.endswith("-files") for a in args)
    if outputs or reads_only or (decrypting_to_stdout and not multifile):
        return
    for operand in operands:
        bare = _GPG_SUFFIX.sub("", operand)
        for written in {bare, operand + ".gpg", operand + ".asc", operand + ".sig"} - {operand}:
            checker.not_onto_grading(written, f"{name} (it writes beside {operand!r})")


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
            if _abbreviates(option, "output-file"):
                if not equals:
                    value, i = (args[i + 1] if i + 1 < len(args) else ""), i + 1
                targets.append(value)
        elif arg.startswith("-") and len(arg) > 1 and "o" in arg:
            value, following = _short_value(args, i, arg.index("o"))
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
                _abbreviates(option, "file") or any(_abbreviates(option, o) for o in _TAR_WRITTEN)
            ):
                value = following
                skip.add(index + 1)
            if _abbreviates(option, "file"):
                archives.append(value)
            for written in _TAR_WRITTEN:
                if _abbreviates(option, written):
                    checker.not_onto_grading(value, f"tar --{written}")
            modes |= {"write" for m in _TAR_WRITE_MODES if len(option) > 1 and m.startswith(option)}
            modes |= {"read" for m in _TAR_READ_MODES if len(option) > 1 and m.startswith(option)}
            continue
        if arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            for j, letter in enumerate(letters, start=1):
                modes |= {"write"} if letter in "cruA" else {"read"} if letter in "txd" else set()
                if letter in _TAR_VALUED:
                    value, following_index = _short_value(args, index, j)
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
            if not equals and any(_abbreviates(option, o) for o in ("date", "reference", "time")):
                i += 1
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in "drt":
                    i = _short_value(args, i, j)[1] - 1
                    break
        else:
            checker.not_onto_grading(arg, "touch")
        i += 1


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
            found = [o for o in _ZIP_LONG_VALUED if _abbreviates(option, o)]
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


# curl's short options that take a value, and its long options naming a file it
# writes (or, -K, a config that can say so).
_CURL_VALUED = set("AbcCdDeEFHKmoPQrtTuUwxXyYz")
_CURL_SHORT = {"o": "output", "D": "dump-header", "c": "cookie-jar", "K": "config"}
_CURL_WRITES: tuple[str, ...] = (
    "output",
    "dump-header",
    "cookie-jar",
    "trace",
    "trace-ascii",
    "stderr",
)
_CURL_WRITES += ("libcurl", "etag-save", "hsts", "alt-svc", "output-dir")
_CURL_LONG = (*_CURL_WRITES, "config", "remote-name", "remote-name-all", "remote-header-name")


def curl(checker: Checker, args: Sequence[str]) -> None:
    """curl writes -o, the header, cookie, trace and cache files, and with -O each
    URL's last name (``file://`` URLs need no network); -J takes the name the server
    sends; -K reads a config that can set all of these."""
    urls: list[str] = []
    remote = False
    directory = ""
    i = 0
    while i < len(args):
        arg = args[i]
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg == "--":
            urls += args[i + 1 :]
            break
        found: list[tuple[str, str]] = []
        if arg.startswith("--"):
            option, equals, value = arg[2:].partition("=")
            names = [o for o in _CURL_LONG if o == option] or [
                o for o in _CURL_LONG if _abbreviates(option, o)
            ]
            if any(n in _CURL_WRITES or n == "config" for n in names) and not equals:
                value, i = following, i + 1
            found = [(n, value) for n in names]
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in "OJ":
                    found.append(("remote-name" if letter == "O" else "remote-header-name", ""))
                elif letter in _CURL_VALUED:
                    value, following_index = _short_value(args, i, j)
                    if letter in _CURL_SHORT:
                        found.append((_CURL_SHORT[letter], value))
                    i = following_index - 1
                    break
        else:
            urls.append(arg)
        for name, value in found:
            if name == "remote-header-name":
                raise WorkspaceCode("curl -J writes under the name the server sends")
            if name == "config":
                checker.script(value, "the config given to curl -K (it can set the output)")
            elif name.startswith("remote-name"):
                remote = True
            else:
                directory = value if name == "output-dir" else directory
                checker.not_onto_grading(value, f"curl --{name}")
        i += 1
    if remote:
        for url in urls:
            last = url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
            written = posixpath.join(directory, last) if directory else last
            checker.not_onto_grading(written, f"curl -O (the URL's last name, {url!r})")


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
