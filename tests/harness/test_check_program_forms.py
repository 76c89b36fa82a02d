"""Checks that run workspace code in forms a reader of the argv can miss (issue 19, 3).

Each form is shown twice: run for real (the shell and the tools on this machine, in
a folder laid out like a workspace) it executes a workspace file, which touches a
marker; loaded through the real task loader it is refused, and the error names the
task file, the check and the field. audit-tasks reports the same form. Honest checks
that read workspace files as data still load.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from benchguard.harness.check_programs import (
    MAX_CHARS,
    MAX_DEPTH,
    MAX_WORDS,
    GradingPaths,
    WorkspaceCode,
    check_command,
)
from benchguard.harness.tasks import load_task, load_tasks
from benchguard.taskaudit.lint import lint_task

# Every workspace program below touches this file (by absolute path: PATH may be '.').
MARKER = "ran-workspace-code"
TOUCH = "/usr/bin/touch"


class _Pickled:
    """Unpickling this runs a program: what python -m pickle does to a workspace file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[list[str]]]:
        return (subprocess.call, ([TOUCH, self.marker],))


def _workspace(root: Path) -> Path:
    """A folder laid out like a workspace an agent filled, plus its grading files."""
    marker = root / MARKER
    shell = f"{TOUCH} {marker}\n"
    for name in ("run.sh", "x", "prog", "compressor", "ws/prog", "ws/grade.py"):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n" + shell, "utf-8")
        path.chmod(0o755)
    python = f"open({str(marker)!r}, 'w').close()\n"
    (root / "script.py").write_text(python, "utf-8")
    (root / "json").mkdir()
    (root / "json" / "__init__.py").write_text(python, "utf-8")
    (root / "json" / "tool.py").write_text("", "utf-8")
    (root / "p.awk").write_text(f'BEGIN {{ system("{TOUCH} {marker}") }}\n', "utf-8")
    (root / "s.sed").write_text("1e ./x\n", "utf-8")
    (root / "GNUmakefile").write_text(f"all:\n\t{TOUCH} {marker}\n", "utf-8")
    (root / "Makefile").write_text("all:\n\t@true\n", "utf-8")  # the grading one
    (root / "mk.mk").write_text(f"all:\n\t{TOUCH} {marker}\n", "utf-8")
    (root / "lines.txt").write_text("x\n", "utf-8")
    (root / "path.txt").write_text(".\n", "utf-8")
    (root / "grade.py").write_text("", "utf-8")
    home = root / "home"
    home.mkdir()
    (home / ".bash_profile").write_text(shell, "utf-8")
    (root / "x.pkl").write_bytes(pickle.dumps(_Pickled(str(marker))))
    with tarfile.open(root / "a.tar", "w") as archive:
        archive.add(root / "lines.txt", arcname="member.txt")
    # Archives the agent left whose member replaces the grading file grade.py.
    with tarfile.open(root / "g.tar", "w") as archive:
        archive.add(root / "ws" / "grade.py", arcname="grade.py")
    with zipfile.ZipFile(root / "g.zip", "w") as archive:
        archive.write(root / "ws" / "grade.py", arcname="grade.py")
    node = f"require('child_process').execFileSync({TOUCH!r}, [{str(marker)!r}])\n"
    (root / "x.js").write_text(node, "utf-8")
    (root / "q.sql").write_text(".shell ./x\n", "utf-8")
    # A compressed file and a JSON string that decompress or format into a program.
    (root / "grade.py.gz").write_bytes(gzip.compress(shell.encode("utf-8")))
    (root / "j.json").write_text('"./x"\n', "utf-8")
    # A diff the agent wrote that turns the (empty) grading grade.py into its program.
    diff = f"--- grade.py\n+++ grade.py\n@@ -0,0 +1 @@\n+{shell}"
    (root / "g.diff").write_text(diff, "utf-8")
    (root / "x.cmake").write_text(f"execute_process(COMMAND {TOUCH} {marker})\n", "utf-8")
    # A real program the loader can map (a shell script it cannot).
    shutil.copy(TOUCH, root / "elf")
    # A mypy config the agent planted, naming a workspace plugin mypy imports.
    (root / "calc.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n", "utf-8")
    (root / "mypy.ini").write_text("[mypy]\nplugins = plug.py\n", "utf-8")
    (root / "plug.py").write_text(python, "utf-8")
    return marker


# (id, argv, run it for real): each executes a workspace file when run as written.
FORMS: list[tuple[str, list[str], bool]] = [
    ("stdin-redirect-sh", ["sh", "-c", "sh < run.sh"], True),
    ("stdin-redirect-bash", ["sh", "-c", "bash < ./x"], True),
    ("stdin-redirect-python", ["sh", "-c", "python3 < script.py"], True),
    ("pipe-into-shell", ["sh", "-c", "cat run.sh | sh"], True),
    ("here-string", ["bash", "-c", "bash <<< ./x"], True),
    ("here-document", ["sh", "-c", "sh <<EOF\n./x\nEOF"], True),
    ("path-dot", ["sh", "-c", "PATH=.:$PATH prog"], True),
    ("path-empty-entry", ["sh", "-c", "PATH=:$PATH prog"], True),
    ("path-append", ["bash", "-c", "PATH+=:.; prog"], True),
    ("path-array", ["bash", "-c", "PATH[0]=.; prog"], True),
    ("env-path", ["env", "PATH=.", "prog"], True),
    ("export-path", ["sh", "-c", "export PATH=.:$PATH; prog"], True),
    ("read-path", ["bash", "-c", "read PATH < path.txt; prog"], True),
    ("printf-path", ["bash", "-c", "printf -v PATH .; prog"], True),
    ("nameref-path", ["bash", "-c", "declare -n p=PATH; p=.; prog"], True),
    ("proc-on-path", ["sh", "-c", "PATH=/proc/self/cwd:$PATH prog"], True),
    ("cd-then-grading-name", ["sh", "-c", "cd ws && sh grade.py"], True),
    ("command-cd", ["sh", "-c", "command cd ws; sh grade.py"], True),
    ("tar-I", ["tar", "-I", "./compressor", "-xf", "a.tar"], True),
    ("tar-long-abbreviated", ["tar", "--use-comp=./compressor", "-xf", "a.tar"], True),
    ("tar-to-command", ["tar", "--to-command=./x", "-xf", "a.tar"], True),
    ("tar-options-env", ["sh", "-c", "TAR_OPTIONS=--to-command=./x tar -xf a.tar"], True),
    ("find-exec", ["find", ".", "-maxdepth", "0", "-exec", "./x", ";"], True),
    ("find-exec-in-shell", ["sh", "-c", "find . -maxdepth 0 -exec ./x \\;"], True),
    ("xargs-program", ["sh", "-c", "echo a | xargs ./x"], True),
    ("xargs-appends-script", ["sh", "-c", "echo run.sh | xargs sh"], True),
    ("git-pager", ["git", "-c", "core.pager=./x", "log"], False),
    ("make-gnumakefile-first", ["make"], True),
    ("make-f", ["make", "-f", "mk.mk"], True),
    ("awk-f", ["awk", "-f", "p.awk", "lines.txt"], True),
    ("awk-system", ["awk", 'BEGIN { system("./x") }'], True),
    ("awk-pipe", ["awk", 'BEGIN { "./x" | getline line }'], True),
    ("sed-f", ["sed", "-f", "s.sed", "lines.txt"], True),
    ("sed-e-command", ["sed", "-n", "1e ./x", "lines.txt"], True),
    ("sed-e-flag", ["sed", "s|.*|./x|e", "lines.txt"], True),
    ("trap", ["sh", "-c", "trap './x' EXIT"], True),
    ("eval", ["sh", "-c", "eval ./x"], True),
    ("source", ["bash", "-c", "source ./x"], True),
    ("dot", ["sh", "-c", ". ./x"], True),
    ("time-wrapper", ["bash", "-c", "time -p ./x"], True),
    ("comment-inside-word", ["sh", "-c", "true x#; ./x"], True),
    ("line-continuation", ["sh", "-c", "s\\\nh run.sh"], True),
    ("brace-expansion", ["bash", "-c", "{sh,run.sh}"], True),
    ("brace-expanded-option", ["bash", "-c", "find . -maxdepth 0 {-exec,./x,\\;}"], True),
    ("ansi-c-quoting", ["bash", "-c", "$'\\x2e/x'"], True),
    ("tar-ansi-c-option", ["bash", "-c", "tar $'-\\x49' ./compressor -xf a.tar"], True),
    ("option-from-variable", ["sh", "-c", "o=--to-command=./x; tar $o -xf a.tar"], True),
    (
        "option-from-loop",
        ["sh", "-c", "for o in --to-command=./x; do tar $o -xf a.tar; done"],
        True,
    ),
    ("copy-over-grading-file", ["sh", "-c", "cp x grade.py && sh grade.py"], True),
    ("redirect-over-grading-file", ["sh", "-c", "cat x > grade.py; sh grade.py"], True),
    ("backquotes", ["sh", "-c", "echo `./x`"], True),
    ("process-substitution", ["bash", "-c", "cat <(./x)"], True),
    ("proc-cwd-script", ["sh", "/proc/self/cwd/run.sh"], True),
    ("proc-cwd-program", ["/proc/self/cwd/x"], True),
    ("env-i-drops-safe-path", ["env", "-i", "python3", "-m", "json.tool", "lines.txt"], True),
    ("python-E-drops-safe-path", ["python3", "-E", "-m", "json.tool", "lines.txt"], True),
    ("unset-safe-path", ["sh", "-c", "unset PYTHONSAFEPATH; python3 -m json.tool x"], True),
    ("python-m-pickle", ["python3", "-m", "pickle", "x.pkl"], True),
    ("bash-env", ["sh", "-c", "BASH_ENV=./x bash -c true"], True),
    ("exported-function", ["env", "BASH_FUNC_grep%%=() { ./x; }", "bash", "-c", "grep"], True),
    ("ps4-substitution", ["bash", "-c", "PS4='$(./x)'; set -x; true"], True),
    ("login-shell-profile", ["bash", "-lc", "true"], True),
    ("sort-compress-program", ["sort", "--compress-program=./x", "lines.txt"], False),
    ("wrapper-not-modelled", ["flock", "lines.txt", "./x"], True),
    ("interpreter-not-modelled", ["python3-dbg", "script.py"], False),
    ("unbalanced-quote", ["sh", "-c", "echo 'x; ./x"], False),
    ("ld-preload", ["env", "LD_PRELOAD=./x.so", "true"], False),
    # Extraction and copies over the grading files, from the agent's archive or tree.
    ("tar-x-over-grading", ["sh", "-c", "tar -xf g.tar && sh grade.py"], True),
    ("tar-x-old-style", ["tar", "xf", "g.tar"], False),
    ("tar-extract-long", ["tar", "--extract", "--file=g.tar"], False),
    ("unzip-over-grading", ["sh", "-c", "unzip -oq g.zip && sh grade.py"], True),
    (
        "cp-target-directory",
        ["sh", "-c", "cp -r --target-directory=. ws/grade.py && sh grade.py"],
        True,
    ),
    # Inline code that loads workspace code or writes over a grading file.
    (
        "python-c-sys-path",
        ["python3", "-c", "import sys; sys.path.insert(0, '.'); import json"],
        True,
    ),
    ("python-c-import", ["python3", "-c", "import solution; solution.check()"], False),
    (
        "python-c-write",
        [
            "sh",
            "-c",
            "python3 -c \"print(open('x').read(), file=open('grade.py', 'w'))\" && sh grade.py",
        ],
        True,
    ),
    ("python-c-dynamic", ["python3", "-c", "exec(open('script.py').read())"], True),
    # The allowed modules import modules of power themselves: an attribute reaches them.
    (
        "python-c-module-attribute",
        ["python3", "-c", "import uuid; o = uuid.os; o.system('./x')"],
        True,
    ),
    (
        "python-c-private-attribute",
        ["python3", "-c", "import statistics; r = statistics.random._os; r.system('./x')"],
        True,
    ),
    (
        "python-c-method-open",
        [
            "sh",
            "-c",
            "python3 -c \"import json; f = json.codecs.open('grade.py', 'w'); print('./x', file=f)\""
            " && sh grade.py",
        ],
        True,
    ),
    (
        "python-c-path-open",
        [
            "sh",
            "-c",
            "python3 -c \"from pathlib import Path; print('./x', file=Path('grade.py').open('w'))\""
            " && sh grade.py",
        ],
        True,
    ),
    (
        "python-c-os-not-a-reader",
        [
            "sh",
            "-c",
            "python3 -c \"import os; os.remove('grade.py'); os.link('x', 'grade.py')\" && sh grade.py",
        ],
        True,
    ),
    (
        "python-c-open-passed-on",
        [
            "sh",
            "-c",
            "python3 -c \"o = open; print('./x', file=o('grade.py', 'w'))\" && sh grade.py",
        ],
        True,
    ),
    (
        "python-c-attrgetter",
        ["python3", "-c", "import operator, uuid; operator.attrgetter('os.system')(uuid)('./x')"],
        True,
    ),
    (
        "python-c-frame-builtins",
        [
            "python3",
            "-c",
            "import sys; b = sys._getframe().f_builtins; b['__import__']('os').system('./x')",
        ],
        True,
    ),
    (
        "python-c-type-hints",
        [
            "python3",
            "-c",
            "import typing\ndef f(a: \"__import__('os').system('./x')\"): pass\ntyping.get_type_hints(f)",
        ],
        True,
    ),
    (
        "python-c-from-import-power",
        ["python3", "-c", "from uuid import os; os.system('./x')"],
        True,
    ),
    ("node-e-require", ["node", "-e", "require('./x.js')"], True),
    (
        "node-e-write",
        ["sh", "-c", "node -e \"require('fs').copyFileSync('x', 'grade.py')\" && sh grade.py"],
        True,
    ),
    (
        "node-e-write-stream",
        [
            "sh",
            "-c",
            "node -e \"const fs = require('fs'); new fs.WriteStream('grade.py').end('./x')\""
            " && sh grade.py",
        ],
        True,
    ),
    ("node-e-computed", ["node", "-e", "this['req' + 'uire']('./x.js')"], False),
    # perl's inline code, read by perl itself under an operation mask.
    ("perl-e-system", ["perl", "-e", "system('./x')"], True),
    ("perl-lane-exec", ["perl", "-lane", "exec './x'", "lines.txt"], True),
    ("perl-e-in-sub", ["perl", "-e", "sub f { `./x` } f()"], True),
    ("perl-e-string-eval", ["perl", "-e", "eval 'sys' . 'tem q(./x)'"], True),
    ("perl-e-ee", ["perl", "-e", "$_ = 'a'; s/a/'sys' . 'tem q(.\\/x)'/ee"], True),
    ("perl-e-begin", ["perl", "-e", "BEGIN { system './x' } 1"], True),
    ("perl-e-symbolic-call", ["perl", "-e", "&{'Dyna' . 'Loader::boot_Dyna' . 'Loader'}()"], False),
    (
        "perl-e-code-ref-call",
        ["perl", "-e", "$f = 'Dyna' . 'Loader::dl_load_file'; $f->('x')"],
        False,
    ),
    ("perl-e-dbmopen", ["perl", "-e", "dbmopen(%h, 'x', 0644)"], False),
    ("perl-e-method", ["perl", "-e", "'Dyna' . 'Loader'->can('x')"], False),
    ("perl-e-argv", ["perl", "-e", "@ARGV = ('./x|'); print while <>"], True),
    ("perl-n-expanded-operand", ["sh", "-c", "perl -ne print *"], False),
    ("perl-i-in-place", ["perl", "-pi", "-e", "s/^/x/", "grade.py"], False),
    ("perl-M-module", ["perl", "-MPOSIX", "-e", "POSIX::system('./x')"], True),
    ("ruby-e", ["ruby", "-e", "system('./x')"], False),
    ("php-r", ["php", "-r", "system('./x');"], False),
    # bash's function keyword: the body's first command shares the definition's words.
    ("bash-function-keyword", ["bash", "-c", "function f { ./x; }; f"], True),
    # Tools that write a file the check names: over a grading file, what runs it next
    # runs what the agent wrote (or the names find found).
    (
        "find-fprint",
        ["sh", "-c", "find . -maxdepth 1 -name x -fprint grade.py && sh grade.py"],
        True,
    ),
    ("sed-w-command", ["sh", "-c", "sed -n 'w grade.py' x && sh grade.py"], True),
    ("sed-s-w-flag", ["sh", "-c", "sed -n 's/^/ /w grade.py' x && sh grade.py"], True),
    ("sed-i-over-grading", ["sh", "-c", "sed -i 's/^/#/' grade.py && sh grade.py"], False),
    ("uniq-output", ["sh", "-c", "uniq x grade.py && sh grade.py"], True),
    ("iconv-output", ["sh", "-c", "iconv -o grade.py x && sh grade.py"], True),
    ("shuf-output", ["sh", "-c", "shuf -o grade.py x && sh grade.py"], True),
    ("xxd-reverse-output", ["sh", "-c", "xxd -r x.hex grade.py && sh grade.py"], False),
    ("wget-output", ["wget", "-O", "grade.py", "http://127.0.0.1:9/x"], False),
    ("gunzip-over-grading", ["sh", "-c", "gunzip -f grade.py.gz && sh grade.py"], True),
    ("gzip-N-stored-name", ["gzip", "-dN", "a.gz"], False),
    # -oFILE holds a value: its letters are not flags (the c of checker is not -c).
    ("zstd-attached-output", ["zstd", "-d", "x.zst", "-ochecker"], False),
    ("python-m-gzip-d", ["python3", "-m", "gzip", "-d", "grade.py.gz"], False),
    (
        "python-m-json-tool-output",
        ["sh", "-c", "python3 -m json.tool j.json grade.py && sh grade.py"],
        True,
    ),
    # Build tools and multi-call binaries that run what the workspace holds.
    # An XSLT stylesheet is a program (exsl:document writes any file).
    ("xsltproc-workspace-stylesheet", ["xsltproc", "s.xsl", "out.xml"], False),
    ("ninja-build-file", ["ninja"], False),
    ("busybox-applet", ["busybox", "sh", "x"], False),
    # An unknown program given a file named like a script.
    ("unknown-program-script", ["mytool", "--verbose", "run.sh"], False),
    # sqlite3's dot-commands run programs.
    ("sqlite-shell", ["sqlite3", ":memory:", ".shell ./x"], True),
    ("sqlite-system", ["sqlite3", ":memory:", ".system ./x"], True),
    ("sqlite-stdin", ["sh", "-c", "sqlite3 :memory: < q.sql"], True),
    ("sqlite-init", ["sqlite3", "-init", "q.sql", ":memory:", "select 1"], True),
    # awk: gawk's indirect call, and print's redirection over a grading file.
    ("awk-indirect-call", ["awk", 'BEGIN { f = "sys" "tem"; @f("./x") }'], False),
    (
        "awk-print-to-file",
        [
            "sh",
            "-c",
            'awk \'BEGIN { while ((getline l < "x") > 0) print l > "grade.py" }\' && sh grade.py',
        ],
        True,
    ),
    # A diff or an archive applied over the grading files (issue: red team 7).
    ("patch-diff-over-grading", ["sh", "-c", "patch -p0 -s < g.diff && sh grade.py"], True),
    ("git-apply-diff", ["sh", "-c", "git apply g.diff && sh grade.py"], True),
    ("git-am-mailbox", ["sh", "-c", "git am g.diff && sh grade.py"], False),
    ("python-m-zipfile-e", ["sh", "-c", "python3 -m zipfile -e g.zip . && sh grade.py"], True),
    ("python-m-tarfile-e", ["sh", "-c", "python3 -m tarfile -e g.tar && sh grade.py"], True),
    ("unzip-o", ["sh", "-c", "unzip -o g.zip && sh grade.py"], True),
    ("bsdtar-x", ["sh", "-c", "bsdtar -xf g.tar && sh grade.py"], False),
    ("cpio-i", ["sh", "-c", "cpio -id < g.cpio && sh grade.py"], False),
    ("cpio-i-late-in-cluster", ["sh", "-c", "cpio -vid < g.cpio && sh grade.py"], False),
    ("7z-x", ["7z", "x", "g.7z"], False),
    ("ar-x", ["ar", "x", "g.a"], False),
    ("rsync-over-grading", ["sh", "-c", "rsync -a ws/ . && sh grade.py"], False),
    ("cp-tree-over-root", ["sh", "-c", "cp -r ws/. . && sh grade.py"], True),
    ("sort-o-over-grading", ["sh", "-c", "sort -o grade.py x && sh grade.py"], True),
    # Programs that run a workspace file given to them.
    ("cmake-P", ["cmake", "-P", "x.cmake"], True),
    ("cmake-configure", ["cmake", "-S", ".", "-B", "build"], False),
    ("loader-runs-program", ["/lib64/ld-linux-x86-64.so.2", "./elf", MARKER], True),
    ("loader-ld-so", ["ld.so", "./elf", MARKER], False),
    ("ldd-program", ["ldd", "./elf"], False),
    ("openssl-engine", ["openssl", "dgst", "-engine", "./e.so", "lines.txt"], False),
    ("openssl-engine-by-name", ["openssl", "dgst", "-engine", "e", "lines.txt"], False),
    ("openssl-conf-env", ["env", "OPENSSL_CONF=x.cnf", "openssl", "dgst", "lines.txt"], False),
    ("dpkg-i", ["dpkg", "-i", "x.deb"], False),
    ("installer-gem", ["gem", "install", "x.gem"], False),
    ("bash-rcfile", ["bash", "--rcfile", "./x", "-i"], True),
    ("env-S", ["env", "-S", "sh run.sh"], True),
    # Linters and formatters that find the agent's config, which names code they load.
    ("mypy-config-plugin", ["mypy", "calc.py"], True),
    ("mypy-strict-dot", ["mypy", "--strict", "."], False),
    ("python-m-mypy", ["python3", "-m", "mypy", "calc.py"], False),
    ("mypy-config-not-grading", ["mypy", "--config-file", "mypy.ini", "calc.py"], True),
    (
        "mypy-python-executable",
        ["mypy", "--config-file", "lint.ini", "--python-executable", "./x", "calc.py"],
        False,
    ),
    ("pylint-discovered", ["pylint", "calc.py"], False),
    ("pylint-load-plugins", ["pylint", "--rcfile=lint.ini", "--load-plugins=plug", "c.py"], False),
    ("pylint-init-hook", ["pylint", "--rcfile=lint.ini", "--init-hook=import plug", "c.py"], False),
    ("pylintrc-env", ["env", "PYLINTRC=x", "pylint", "--rcfile=lint.ini", "calc.py"], False),
    ("flake8-discovered", ["flake8", "calc.py"], False),
    ("flake8-append-config", ["flake8", "--isolated", "--append-config=x.cfg", "c.py"], False),
    ("eslint-discovered", ["eslint", "."], False),
    ("eslint-c-merges-eslintrc", ["eslint", "-c", "lint.ini", "."], False),
    (
        "eslint-rulesdir",
        ["eslint", "-c", "lint.ini", "--no-eslintrc", "--rulesdir", "r", "."],
        False,
    ),
    ("eslint-formatter", ["eslint", "--no-config-lookup", "-c", "lint.ini", "-f", "./f.js"], False),
    ("prettier-discovered", ["prettier", "--check", "."], False),
    ("prettier-plugin", ["prettier", "--no-config", "--plugin=./p.js", "--check", "."], False),
    ("pre-commit", ["pre-commit", "run", "--all-files"], False),
    ("coverage-discovered", ["coverage", "report"], False),
    ("coverage-run", ["coverage", "run", "--rcfile=lint.ini", "x.py"], False),
    ("bandit-discovered", ["bandit", "-r", "."], False),
]
# What the error must say for the forms whose rule has a reason of its own (a rule
# caught by a broader one would otherwise go unnoticed when it is removed).
REASONS = {
    "stdin-redirect-sh": "standard input",
    "here-document": "here-document",
    "path-dot": "on PATH",
    "cd-then-grading-name": "changes directory",
    "command-cd": "changes directory",
    "brace-expanded-option": "brace-expanded",
    "tar-I": "names a program",
    "make-gnumakefile-first": "first makefile",
    "sed-e-command": "runs a command (e)",
    "login-shell-profile": "startup files",
    "env-i-drops-safe-path": "removes variables",
    "python-E-drops-safe-path": "PYTHONSAFEPATH",
    "exported-function": "not a variable name",
    "unbalanced-quote": "not closed",
    "option-from-variable": "may become any option",
    "copy-over-grading-file": "over the task's grading files",
    "redirect-over-grading-file": "over the task's grading files",
    "tar-x-over-grading": "tar extracts",
    "tar-x-old-style": "tar extracts",
    "tar-extract-long": "tar extracts",
    "unzip-over-grading": "unzip extracts",
    "cp-target-directory": "over the task's grading files",
    "python-c-sys-path": "sys.path",
    "python-c-import": "imports 'solution'",
    "python-c-write": "for writing",
    "python-c-dynamic": "uses exec",
    "gunzip-over-grading": "gunzip -d writes",
    "gzip-N-stored-name": "the name stored in the archive",
    "zstd-attached-output": "zstd -o writes",
    "python-m-gzip-d": "python -m gzip -d writes",
    "python-m-json-tool-output": "python -m json.tool's output writes",
    "bash-function-keyword": "would come from the agent's workspace",
    "find-fprint": "find -fprint writes",
    "sed-w-command": "sed's w command writes",
    "sed-s-w-flag": "sed's w command writes",
    "sed-i-over-grading": "sed -i writes",
    "uniq-output": "uniq's output writes",
    "iconv-output": "iconv's output writes",
    "shuf-output": "shuf's output writes",
    "xxd-reverse-output": "xxd's output writes",
    "wget-output": "wget's output writes",
    "ninja-build-file": "'ninja' runs the workspace's own",
    "xsltproc-workspace-stylesheet": "the stylesheet given to xsltproc",
    "busybox-applet": "'busybox' runs its operands",
    "perl-e-system": "uses 'system'",
    "perl-lane-exec": "uses 'exec'",
    "perl-e-in-sub": "uses 'quoted execution",
    "perl-e-string-eval": "uses 'eval \"string\"'",
    "perl-e-ee": "uses 'eval \"string\"'",
    "perl-e-begin": "uses 'system'",
    "perl-e-symbolic-call": "calls a sub through a reference",
    "perl-e-code-ref-call": "calls a sub through a reference",
    "perl-e-dbmopen": "uses 'dbmopen'",
    "perl-e-method": "uses 'method",
    "perl-e-argv": "changes @ARGV",
    "perl-n-expanded-operand": "the shell would still expand it",
    "perl-i-in-place": "perl -i edits",
    "perl-M-module": "perl -M loads a module",
    "ruby-e": "ruby -e code cannot be read here",
    "php-r": "php -r code cannot be read here",
    "python-c-module-attribute": "reaches .os,",
    "python-c-private-attribute": "reaches ._os,",
    "python-c-method-open": "opens a file for writing (mode 'w')",
    "python-c-path-open": "opens a file for writing (mode 'w')",
    "python-c-os-not-a-reader": "uses os other than through its readers",
    "python-c-open-passed-on": "passes open on",
    "python-c-attrgetter": "reaches .attrgetter,",
    "python-c-frame-builtins": "reaches .f_builtins,",
    "python-c-type-hints": "reaches .get_type_hints,",
    "python-c-from-import-power": "imports 'os', which runs programs",
    "node-e-require": "'require'",
    "node-e-computed": "'this'",
    "node-e-write": "'copyFileSync'",
    "node-e-write-stream": "'WriteStream'",
    "unknown-program-script": "not a program this reader knows",
    "sqlite-shell": "dot-command",
    "sqlite-system": "dot-command",
    "sqlite-stdin": "standard input",
    "sqlite-init": "-init",
    "awk-indirect-call": "'@f('",
    "awk-print-to-file": "writes to a file",
    "patch-diff-over-grading": "patch applies the agent's diff",
    "git-apply-diff": ".git/config",
    "git-am-mailbox": ".git/config",
    "python-m-zipfile-e": "python -m zipfile -e",
    "python-m-tarfile-e": "python -m tarfile -e",
    "unzip-o": "unzip extracts",
    "bsdtar-x": "tar extracts",
    "cpio-i": "cpio -id writes",
    "cpio-i-late-in-cluster": "cpio -vid writes",
    "7z-x": "7z extracts",
    "ar-x": "ar extracts",
    "rsync-over-grading": "'rsync' runs its operands",
    "cp-tree-over-root": "over the task's grading files",
    "sort-o-over-grading": "sort -o writes",
    "cmake-P": "the script given to cmake -P",
    "cmake-configure": "cmake runs CMake code",
    "loader-runs-program": "the program given to the loader",
    "loader-ld-so": "the program given to the loader",
    "ldd-program": "ldd",
    "openssl-engine": "loads an engine",
    "openssl-engine-by-name": "loads an engine",
    "openssl-conf-env": "sets OPENSSL_CONF",
    "dpkg-i": "maintainer scripts",
    "installer-gem": "installs packages",
    "bash-rcfile": "the file given to --rcfile",
    "env-S": "the script given to the shell",
    "mypy-config-plugin": "mypy finds its config in the working directory",
    "mypy-strict-dot": "--config-file FILE",
    "python-m-mypy": "mypy finds its config",
    "mypy-config-not-grading": "the config given to mypy",
    "mypy-python-executable": "mypy --python-executable loads code",
    "pylint-discovered": "pylint finds its config",
    "pylint-load-plugins": "pylint --load-plugins loads code",
    "pylint-init-hook": "pylint --init-hook loads code",
    "pylintrc-env": "sets PYLINTRC",
    "flake8-discovered": "--isolated",
    "flake8-append-config": "flake8 --append-config",
    "eslint-discovered": "eslint finds its config",
    "eslint-c-merges-eslintrc": "--no-eslintrc or --no-config-lookup",
    "eslint-rulesdir": "eslint --rulesdir",
    "eslint-formatter": "loads a formatter module",
    "prettier-discovered": "prettier finds its config",
    "prettier-plugin": "prettier --plugin",
    "pre-commit": "pre-commit runs git",
    "coverage-discovered": "coverage finds its config",
    "coverage-run": "coverage run runs a program",
    "bandit-discovered": "bandit finds its config",
}
# The grading files the refusals are judged against: the forms' files are not among them.
GRADING = ("grade.py", "Makefile", "verify.cmake", "checker", "lint.ini")


def _environment(root: Path) -> dict[str, str]:
    """The grading box's environment for a check (harness/grading.py)."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(root / "home"),
        "LC_ALL": "C.UTF-8",
        "PYTHONSAFEPATH": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


@pytest.mark.parametrize("argv", [f[1] for f in FORMS if f[2]], ids=[f[0] for f in FORMS if f[2]])
def test_each_form_really_runs_a_workspace_file(tmp_path: Path, argv: list[str]) -> None:
    """Guards against refusing a form that is harmless: bash and the tools run it."""
    program = argv[0] if argv[0].startswith("/") else shutil.which(argv[0])
    if program is None:
        pytest.skip(f"{argv[0]} is not installed")
    marker = _workspace(tmp_path)
    subprocess.run(
        [program, *argv[1:]],
        cwd=tmp_path,
        env=_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert marker.exists(), f"{argv} did not run the workspace file here"


def _task(tmp_path: Path, command: list[str], grading: tuple[str, ...] = GRADING) -> Path:
    folder = tmp_path / "tasks" / "t"
    folder.mkdir(parents=True)
    for name in grading:
        (folder / name).write_text("all:\n\t@true\n", "utf-8")
    body = {
        "name": "t",
        "prompt": "p",
        "grading_files": list(grading),
        "verification": [
            {"name": "ok", "role": "correctness", "file": "a.txt", "exists": True},
            {"name": "sneaky", "role": "correctness", "command": command},
        ],
    }
    (folder / "task.yaml").write_text(json.dumps(body), "utf-8")
    return folder / "task.yaml"


@pytest.mark.parametrize(("form", "argv"), [f[:2] for f in FORMS], ids=[f[0] for f in FORMS])
def test_each_form_is_refused_at_load_naming_file_check_and_field(
    tmp_path: Path, form: str, argv: list[str]
) -> None:
    """Guards against a check that lets a deliverable decide its own grade loading."""
    path = _task(tmp_path, argv)
    loaded = load_tasks(tmp_path / "tasks")
    assert loaded.tasks == ()
    [message] = loaded.errors
    assert str(path) in message
    assert "check 'sneaky'" in message and "verification.1.command" in message
    assert "Traceback" not in message
    assert REASONS.get(form, "") in message


@pytest.mark.parametrize("argv", [f[1] for f in FORMS], ids=[f[0] for f in FORMS])
def test_audit_tasks_reports_each_form_as_hackable(tmp_path: Path, argv: list[str]) -> None:
    """Guards against audit-tasks and run disagreeing about one check."""
    task = load_task(_task(tmp_path, argv), allow_workspace_code=True)
    found = [(f.id, f.check, f.hackable) for f in lint_task(task)]
    assert ("runs-workspace-program", "sneaky", True) in found


HONEST: list[list[str]] = [
    ["python3", "-m", "json.tool", "answer.json"],
    ["grep", "-q", "foo", "out.txt"],
    ["diff", "expected", "out"],
    ["cat", "answer.txt"],
    ["sh", "-c", "grep -q 137 answer.txt && test -s report.md"],
    ["sh", "-c", "grep x out.txt 2>/dev/null | wc -l > /dev/null"],
    ["sh", "-c", "PATH=/usr/bin:$PATH grep -q x out.txt"],
    ["sh", "-c", "trap 'rm -f tmp.txt' EXIT; grep -q x out.txt"],
    ["sh", "-c", "grep -q '$(not run)' out.txt"],
    ["sh", "-c", 'for f in a.txt b.txt; do grep -q x "$f"; done'],
    ["sh", "-c", 'for f in a.txt b.txt; do python3 grade.py "$f"; done'],
    ["sh", "-c", "if grep -q x out.txt; then exit 0; else exit 1; fi"],
    ["sh", "-c", "ls | xargs grep -q x"],
    ["sh", "-c", "cat answer.txt | python3 -m json.tool"],
    ["awk", "{s+=$1} END {exit s!=137}", "numbers.txt"],
    ["awk", "-F,", "$2 > 3 || $1 == 0 {n++} END {exit n == 0}", "rows.csv"],
    ["sed", "-n", "2p", "out.txt"],
    ["sed", "-n", "/total/{s/ //g;p;q}", "out.txt"],
    ["find", ".", "-name", "*.txt", "-exec", "grep", "-q", "x", "{}", "+"],
    ["tar", "-tzf", "out.tgz"],
    ["python3", "-I", "-c", "import json; json.load(open('answer.json'))"],
    ["make", "-f", "Makefile", "check"],
    ["python3", "grade.py", "answer.txt"],
    ["sh", "-c", "sort out.txt > sorted.txt && diff sorted.txt expected.txt"],
    ["sh", "-c", "cp out.txt copy.txt && grep -q x copy.txt 2>/dev/null"],
    # The twins of the forms above that read only.
    ["tar", "-xOf", "out.tar", "member.txt"],
    ["tar", "-xf", "out.tar", "-C", "/tmp/unpacked"],
    ["unzip", "-l", "out.zip"],
    ["unzip", "-p", "out.zip", "a.txt"],
    ["cp", "-r", "--target-directory=copies", "out"],
    ["python3", "-c", "import json, sys; sys.exit(json.load(open('answer.json'))['t'] != 137)"],
    ["python3", "-c", "import re; print(re.findall(r'[0-9]+', open('out.txt', 'r').read()))"],
    ["node", "-e", "const t = [1, 2].length + 1; if (t !== 3) throw new Error('bad')"],
    # The writers' twins that write elsewhere, and a function that reads.
    ["sed", "-n", "w /dev/stdout", "out.txt"],
    ["sh", "-c", "cp out.txt copy.txt && sed -i s/a/b/ copy.txt && grep -q b copy.txt"],
    ["uniq", "-c", "out.txt"],
    ["sh", "-c", "gzip -dc out.gz | grep -q 137"],
    ["gunzip", "-k", "out.txt.gz"],
    ["iconv", "-f", "utf-8", "-t", "ascii", "out.txt"],
    ["find", ".", "-name", "*.txt", "-fprint", "/tmp/list"],
    ["bash", "-c", "function f { grep -q x out.txt; }; f"],
    # perl one-liners that read.
    ["perl", "-lane", "$s += $F[0]; END { exit($s != 137) }", "numbers.txt"],
    ["perl", "-0777", "-ne", "exit(/137/ ? 0 : 1)", "answer.txt"],
    ["perl", "-F,", "-lane", "print $F[1]", "rows.csv"],
    ["perl", "-E", "say 137"],
    ["perl", "-wle", "print join ',', sort { $a <=> $b } 3, 1, 2"],
    ["sh", "-c", "perl -ne 'print if /total/' out.txt | grep -q 137"],
    # os, posixpath and pathlib for reading.
    ["python3", "-c", "import os, sys; sys.exit(not os.path.exists('answer.txt'))"],
    ["python3", "-c", "import os; assert 'answer.txt' in sorted(os.listdir('.'))"],
    ["python3", "-c", "from pathlib import Path; assert Path('answer.txt').read_text().strip()"],
    ["python3", "-c", "from pathlib import Path; print(Path('a.txt').open('r').read())"],
    [
        "python3",
        "-c",
        "import os, json; [json.load(open(os.path.join(r, f))) for r, _, fs in os.walk('.') "
        "for f in fs if f.endswith('.json')]",
    ],
    ["python3", "-c", "import os; assert os.environ.get('HOME')"],
    ["python3", "-c", "from os.path import getsize; assert getsize('answer.txt') > 0"],
    ["node", "-e", "const fs = require('fs'); JSON.parse(fs.readFileSync('a.json', 'utf8'))"],
    ["xmllint", "--noout", "out.xml"],
    ["sqlite3", "out.db", "select count(*) from results"],
    ["sqlite3", "-readonly", "out.db", "select total from answer where id = 1"],
    ["awk", "{print ($1 > 3)}", "rows.csv"],
    ["awk", "{print $1}", "rows.csv"],
    # The twins of the red team 7 forms: the diff or archive read as data, the file
    # run from the task's own copy.
    ["grep", "-q", "^+++ b/calc.py", "fix.diff"],
    ["python3", "-m", "zipfile", "-l", "out.zip"],
    ["python3", "-m", "tarfile", "-t", "out.tar"],
    ["bsdtar", "-tf", "out.tar"],
    ["sh", "-c", "cpio -t < out.cpio"],
    ["7z", "l", "out.7z"],
    ["ar", "t", "lib.a"],
    ["sh", "-c", "cp -r out/. copies"],
    ["sort", "-o", "sorted.txt", "out.txt"],
    ["cmake", "-P", "verify.cmake"],
    ["cmake", "-E", "compare_files", "answer.txt", "expected.txt"],
    ["/lib64/ld-linux-x86-64.so.2", "./checker", "answer.txt"],
    ["ldd", "checker"],
    ["openssl", "dgst", "-sha256", "answer.txt"],
    ["dpkg", "-c", "pkg.deb"],
    ["bash", "--rcfile", "grade.py", "-c", "true"],
    ["env", "-S", "grep -q x out.txt"],
    # The linters with their config pinned to a grading file (or discovery off).
    ["mypy", "--config-file", "lint.ini", "calc.py"],
    ["mypy", "--config-file=lint.ini", "--strict", "."],
    ["python3", "-m", "mypy", "--config-file", "lint.ini", "calc.py"],
    ["pylint", "--rcfile=lint.ini", "calc.py"],
    ["flake8", "--config=lint.ini", "calc.py"],
    ["flake8", "--isolated", "calc.py"],
    ["eslint", "-c", "lint.ini", "--no-eslintrc", "."],
    ["eslint", "--no-config-lookup", "-c", "lint.ini", "-f", "json", "."],
    ["prettier", "--no-config", "--check", "."],
    ["prettier", "--config", "lint.ini", "--check", "."],
    ["coverage", "report", "--rcfile=lint.ini"],
    ["bandit", "--ini", "lint.ini", "-r", "."],
    ["ruff", "check", "."],
]


@pytest.mark.parametrize("argv", HONEST, ids=[" ".join(a) for a in HONEST])
def test_honest_data_checks_still_load(tmp_path: Path, argv: list[str]) -> None:
    """Guards against the rules refusing checks that only read the workspace as data."""
    _task(tmp_path, argv)
    loaded = load_tasks(tmp_path / "tasks")
    assert loaded.errors == ()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["true"] * (MAX_WORDS + 1), f"at most {MAX_WORDS}"),
        (["echo", "x" * (MAX_CHARS + 1)], f"at most {MAX_CHARS}"),
    ],
    ids=["words", "characters"],
)
def test_oversized_commands_are_refused_with_the_bound(command: list[str], expected: str) -> None:
    """Guards against an untrusted task file making the reader do unbounded work."""
    with pytest.raises(WorkspaceCode, match=expected):
        check_command(command, GradingPaths())


def test_nesting_beyond_the_bound_is_refused() -> None:
    """Guards against a deep nest of shell strings recursing without a limit."""
    text = "true"
    for _ in range(MAX_DEPTH + 2):
        text = "sh -c " + json.dumps(text)
    with pytest.raises(WorkspaceCode, match="too deeply"):
        check_command(["sh", "-c", text], GradingPaths())
    check_command(["sh", "-c", 'sh -c "grep -q x out.txt"'], GradingPaths())


def test_the_real_shell_agrees_on_the_honest_shell_strings(tmp_path: Path) -> None:
    """Guards against the lexer reading an honest string differently from sh: each
    allowed shell string is valid for ``sh -n`` (dash) and ``bash -n``."""
    for argv in HONEST:
        if argv[:2] == ["sh", "-c"]:
            for shell in ("sh", "bash"):
                done = subprocess.run(
                    [shell, "-n", "-c", argv[2]], capture_output=True, check=False
                )
                assert done.returncode == 0, (shell, argv, done.stderr)


def test_fixture_workspace_has_no_stray_marker(tmp_path: Path) -> None:
    assert not _workspace(tmp_path).exists()
    assert os.access(tmp_path / "x", os.X_OK)


# Red team 7's task files, as they wrote them: each passed with a cheating agent.
RED_TEAM_7 = [
    ("patch-fix", ["sh", "-c", "patch -p1 --batch < fix.diff && python3 grade.py"], "patch"),
    ("tar-submit", ["sh", "-c", "tar -xf submission.tar && python3 grade.py"], "tar extracts"),
    ("cmake-verify", ["cmake", "-P", "verify.cmake"], "cmake -P"),
    ("loader-run", ["/lib64/ld-linux-x86-64.so.2", "./checker", "answer.txt"], "loader"),
    ("typed-calc", ["mypy", "calc.py"], "mypy finds its config"),
]


@pytest.mark.parametrize(("task", "argv", "reason"), RED_TEAM_7, ids=[r[0] for r in RED_TEAM_7])
def test_red_team_7_tasks_are_refused_and_audited_hackable(
    tmp_path: Path, task: str, argv: list[str], reason: str
) -> None:
    """Guards against the red team's archive, diff, CMake and loader checks loading
    (they graded a cheating agent 1.00) and against audit-tasks calling them clean."""
    path = _task(tmp_path, argv, grading=("grade.py",))
    [message] = load_tasks(tmp_path / "tasks").errors
    assert str(path) in message and reason in message
    audited = load_task(path, allow_workspace_code=True)
    found = [(f.id, f.check, f.hackable) for f in lint_task(audited)]
    assert ("runs-workspace-program", "sneaky", True) in found


def test_a_pinned_mypy_config_ignores_the_planted_one(tmp_path: Path) -> None:
    """Guards against --config-file being a pin only on paper: with the agent's
    mypy.ini (naming its plugin) in the working directory, mypy given a grading config
    imports nothing from the workspace (red team 7's linter-config-plugin)."""
    mypy = shutil.which("mypy")
    if mypy is None:
        pytest.skip("mypy is not installed")
    marker = _workspace(tmp_path)
    (tmp_path / "lint.ini").write_text("[mypy]\n", "utf-8")
    check_command(["mypy", "--config-file", "lint.ini", "calc.py"], GradingPaths(GRADING))
    done = subprocess.run(
        [mypy, "--config-file", "lint.ini", "calc.py"],
        cwd=tmp_path,
        env=_environment(tmp_path),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert not marker.exists()
