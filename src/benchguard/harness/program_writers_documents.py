"""Document, crypto, download and binary-rewriting tools for the program-writer vetting.

pandoc, xsltproc, tidy, openssl, gpg, curl and the binutils that rewrite their operands
(objcopy, strip, ...): each writes a file an option or operand names (handed to
``checker.not_onto_grading``) or loads a file as code (filters, stylesheets, configs,
engines; handed to ``checker.script``). Kept apart from ``program_writers`` so each reader
family stays small; it is re-exported there.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from benchguard.harness.program_options import Checker, WorkspaceCode
from benchguard.harness.program_writers_args import abbreviates, short_value

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
                o for o in _PANDOC_LONG if abbreviates(option, o)
            ]
            if found and not equals:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            for long in found:
                _pandoc_option(checker, long, value)
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in _PANDOC_VALUED:
                    value, following = short_value(args, i, j)
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
            dump = name == "objcopy" and abbreviates(option, "dump-section")
            output = abbreviates(option, "output-file") or option == "output"
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
                    value, following = short_value(args, i, j)
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
                o for o in ("output", "homedir", "options") if option == o or abbreviates(option, o)
            ]
            if abbreviates(option, "use-embedded-filename"):
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
                    value, following_index = short_value(args, i, j)
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
                o for o in _CURL_LONG if abbreviates(option, o)
            ]
            if any(n in _CURL_WRITES or n == "config" for n in names) and not equals:
                value, i = following, i + 1
            found = [(n, value) for n in names]
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in "OJ":
                    found.append(("remote-name" if letter == "O" else "remote-header-name", ""))
                elif letter in _CURL_VALUED:
                    value, following_index = short_value(args, i, j)
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
