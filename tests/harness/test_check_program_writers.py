"""Checks that write a grading file through a program's output option or operand
(issue 19): pandoc, xsltproc, objcopy and strip, tidy, openssl, gpg, uudecode,
tar -c, touch, sponge, zip, curl, rm, and the variables that redirect them.

Each form is shown twice: run for real here (when its tool is installed) it writes
the grading file it names, or runs the workspace program it is given; loaded through
the real task loader it is refused, the error naming the task file, the check and the
field. The same programs reading the workspace as data, or writing elsewhere, load.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from benchguard.harness.tasks import load_task, load_tasks
from benchguard.taskaudit.lint import lint_task

MARKER = "ran-workspace-code"
TOUCH = "/usr/bin/touch"
# The task's grading files and folders: the forms write onto these.
GRADING = ("grade.py", "tests", "page.html", "copy.xsl", "check.lua", "checker", "suite.zip")


def _literal_packet(name: str, data: bytes) -> bytes:
    """An OpenPGP literal data packet (tag 11, old format): what ``gpg --store``
    writes, carrying the file name ``--use-embedded-filename`` writes to."""
    body = b"b" + bytes([len(name)]) + name.encode("ascii") + b"\0\0\0\0" + data
    assert len(body) < 256
    return bytes([0x80 | (11 << 2)]) + bytes([len(body)]) + body


def _uuencoded(name: str, data: bytes) -> str:
    lines = [binascii.b2a_uu(data[i : i + 45]).decode("ascii") for i in range(0, len(data), 45)]
    return f"begin 644 {name}\n" + "".join(lines) + "`\nend\n"


def _workspace(root: Path) -> Path:
    """A folder laid out like a workspace the agent filled, beside the grading files."""
    marker = root / MARKER
    shell = f"#!/bin/sh\n{TOUCH} {marker}\n"
    lua = f'os.execute("{TOUCH} {marker}")\n'
    files = {
        "x": shell,
        "x.md": f"```\n{TOUCH} {marker}\n```\n",
        "a.md": "# answer\n",
        "f.lua": lua,
        "w.lua": lua,
        "d.yaml": "filters:\n- ./x\n",
        "doc.xml": f"<x>{TOUCH} {marker}</x>\n",
        "x.html": "<p>x\n",
        "t.conf": "write-back: yes\n",
        "c.cfg": 'output = "grade.py"\n',
        "ws/grade.py": shell,
        "__main__.py": f"open({str(marker)!r}, 'w').close()\n",
        "x.b64": base64.encodebytes(shell.encode("utf-8")).decode("ascii"),
        "x.uu": _uuencoded("grade.py", shell.encode("utf-8")),
        "y.uu": _uuencoded("other", shell.encode("utf-8")),
        # The agent's stylesheet, named as no script is: it writes grade.py.
        "s.txt": (
            '<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"'
            ' xmlns:exsl="http://exslt.org/common" extension-element-prefixes="exsl">'
            '<xsl:template match="/"><exsl:document href="grade.py" method="text">'
            '<xsl:value-of select="."/></exsl:document></xsl:template></xsl:stylesheet>\n'
        ),
        # The task's own files.
        "grade.py": "",
        "tests/test_x.py": "",
        "page.html": "<p>x\n",
        "check.lua": "",
        "copy.xsl": (
            '<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">'
            '<xsl:output method="text"/><xsl:template match="/">'
            '<xsl:value-of select="."/></xsl:template></xsl:stylesheet>\n'
        ),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    (root / "x").chmod(0o755)
    (root / "home").mkdir()
    for name in ("x.gpg", "grade.py.gpg"):
        (root / name).write_bytes(_literal_packet("grade.py", shell.encode("utf-8")))
    shutil.copy(TOUCH, root / "elf")
    shutil.copy(TOUCH, root / "checker")
    with tarfile.open(root / "a.tar", "w") as archive:
        archive.add(root / "x", arcname="member.txt")
    return marker


# (id, argv, the tool it needs, what running it proves, what the refusal must say).
# The proof is "marker" (it ran the workspace program), a path (it wrote that file:
# its bytes, inode or mtime changed, or it now exists), or "" (not run here).
FORMS: list[tuple[str, list[str], str, str, str]] = [
    (
        "pandoc-o",
        ["sh", "-c", "pandoc -t plain -o grade.py x.md && sh grade.py"],
        "pandoc",
        "marker",
        "pandoc --output writes to 'grade.py'",
    ),
    (
        "pandoc-output-abbreviated",
        ["pandoc", "-t", "plain", "--outp=grade.py", "x.md"],
        "pandoc",
        "grade.py",
        "pandoc --output writes",
    ),
    ("pandoc-short-cluster", ["pandoc", "-sograde.py", "x.md"], "pandoc", "grade.py", "--output"),
    (
        "pandoc-o-grading-folder",
        ["pandoc", "a.md", "-o", "tests/test_x.py"],
        "pandoc",
        "tests/test_x.py",
        "pandoc --output writes to 'tests/test_x.py'",
    ),
    ("pandoc-log", ["pandoc", "--log=grade.py", "a.md"], "pandoc", "grade.py", "pandoc --log"),
    (
        "pandoc-extract-media",
        ["pandoc", "--extract-media=.", "a.md"],
        "pandoc",
        "",
        "pandoc --extract-media writes",
    ),
    (
        "pandoc-filter",
        ["pandoc", "--filter", "x", "a.md"],
        "pandoc",
        "marker",
        "the filter given to pandoc --filter",
    ),
    (
        "pandoc-lua-filter",
        ["pandoc", "-L", "f.lua", "a.md"],
        "pandoc",
        "marker",
        "the filter given to pandoc --lua-filter",
    ),
    (
        "pandoc-defaults-names-filter",
        ["pandoc", "-d", "d", "a.md"],
        "pandoc",
        "marker",
        "the defaults file given to pandoc --defaults (it can name filters) 'd.yaml'",
    ),
    (
        "pandoc-custom-writer",
        ["pandoc", "-t", "w.lua", "a.md"],
        "pandoc",
        "marker",
        "the custom Lua format given to pandoc --to",
    ),
    (
        "pandoc-data-dir",
        ["pandoc", "--data-dir=ws", "-L", "check.lua", "a.md"],
        "pandoc",
        "",
        "the data directory given to pandoc",
    ),
    (
        "pandoc-pdf-engine-opt",
        ["pandoc", "--pdf-engine-opt=-shell-escape", "-o", "/tmp/x.pdf", "a.md"],
        "pandoc",
        "",
        "passes options to the PDF engine",
    ),
    ("pandoc-lua", ["pandoc", "lua", "-e", "os.execute('./x')"], "pandoc", "", "runs Lua code"),
    (
        "xsltproc-o",
        ["sh", "-c", "xsltproc -o grade.py copy.xsl doc.xml && sh grade.py"],
        "xsltproc",
        "marker",
        "xsltproc -o writes to 'grade.py'",
    ),
    (
        "xsltproc-single-dash-output",
        ["xsltproc", "-output", "grade.py", "copy.xsl", "doc.xml"],
        "xsltproc",
        "grade.py",
        "xsltproc -o writes",
    ),
    (
        "xsltproc-stylesheet-any-name",
        ["xsltproc", "s.txt", "doc.xml"],
        "xsltproc",
        "grade.py",
        "the stylesheet given to xsltproc",
    ),
    (
        "objcopy-output-operand",
        ["sh", "-c", "objcopy -I binary -O binary x grade.py && sh grade.py"],
        "objcopy",
        "marker",
        "objcopy (it rewrites its operands) writes to 'grade.py'",
    ),
    (
        "objcopy-in-place",
        ["objcopy", "-R", ".comment", "checker"],
        "objcopy",
        "checker",
        "objcopy (it rewrites its operands) writes to 'checker'",
    ),
    (
        "objcopy-dump-section",
        ["objcopy", "--dump-section", ".rodata=grade.py", "elf", "out.o"],
        "objcopy",
        "grade.py",
        "objcopy --dump-section writes",
    ),
    ("strip-o", ["strip", "-o", "grade.py", "elf"], "strip", "grade.py", "strip -o writes"),
    ("strip-in-place", ["strip", "checker"], "strip", "checker", "strip (it rewrites"),
    ("tidy-m", ["tidy", "-qm", "page.html"], "tidy", "page.html", "tidy -m (it rewrites"),
    (
        "tidy-m-after-unknown-letter",
        ["tidy", "-qom", "page.html"],
        "tidy",
        "page.html",
        "tidy -m (it rewrites",
    ),
    (
        "tidy-write-back",
        ["tidy", "-q", "--write-back", "yes", "page.html"],
        "tidy",
        "page.html",
        "tidy -m (it rewrites",
    ),
    ("tidy-o", ["tidy", "-q", "-o", "grade.py", "x.html"], "tidy", "grade.py", "tidy -o writes"),
    (
        "tidy-error-file",
        ["tidy", "-q", "-f", "grade.py", "x.html"],
        "tidy",
        "grade.py",
        "tidy -f writes",
    ),
    (
        "tidy-config",
        ["tidy", "-q", "-config", "t.conf", "page.html"],
        "tidy",
        "page.html",
        "the config given to tidy -config",
    ),
    (
        "tidy-config-from-env",
        ["env", "HTML_TIDY=t.conf", "tidy", "-q", "page.html"],
        "tidy",
        "page.html",
        "sets HTML_TIDY",
    ),
    (
        "openssl-base64-out",
        ["sh", "-c", "openssl base64 -d -in x.b64 -out grade.py && sh grade.py"],
        "openssl",
        "marker",
        "openssl -out writes to 'grade.py'",
    ),
    (
        "openssl-out-equals",
        ["openssl", "enc", "-d", "-base64", "-in", "x.b64", "-out=grade.py"],
        "openssl",
        "grade.py",
        "openssl -out writes",
    ),
    (
        "openssl-double-dash-out",
        ["openssl", "base64", "-d", "-in", "x.b64", "--out", "grade.py"],
        "openssl",
        "grade.py",
        "openssl -out writes",
    ),
    (
        "openssl-dgst-out",
        ["openssl", "dgst", "-sha256", "-out", "grade.py", "x"],
        "openssl",
        "grade.py",
        "openssl -out writes",
    ),
    (
        "openssl-writerand",
        ["openssl", "rand", "-writerand", "grade.py", "8"],
        "openssl",
        "grade.py",
        "openssl -writerand writes",
    ),
    (
        "openssl-double-dash-engine",
        ["openssl", "dgst", "--engine", "./e.so", "x"],
        "openssl",
        "",
        "loads an engine",
    ),
    (
        "gpg-o",
        ["sh", "-c", "gpg --batch -q --yes -o grade.py -d x.gpg && sh grade.py"],
        "gpg",
        "marker",
        "gpg -o writes to 'grade.py'",
    ),
    (
        "gpg-output-abbreviated",
        ["gpg", "--batch", "-q", "--yes", "--out", "grade.py", "-d", "x.gpg"],
        "gpg",
        "grade.py",
        "gpg --output writes",
    ),
    (
        "gpg-decrypt-files-beside",
        ["gpg", "--batch", "-q", "--yes", "--decrypt-files", "grade.py.gpg"],
        "gpg",
        "grade.py",
        "gpg (it writes beside 'grade.py.gpg') writes to 'grade.py'",
    ),
    (
        "gpg-no-command-beside",
        ["gpg", "--batch", "-q", "--yes", "grade.py.gpg"],
        "gpg",
        "grade.py",
        "gpg (it writes beside",
    ),
    (
        "gpg-embedded-filename",
        ["gpg", "--batch", "-q", "--yes", "--use-embedded-filename", "x.gpg"],
        "gpg",
        "grade.py",
        "the name stored in the message",
    ),
    ("gpg-homedir", ["gpg", "--homedir", "ws", "--verify", "a.sig"], "gpg", "", "the homedir"),
    ("gnupghome-env", ["env", "GNUPGHOME=ws", "gpg", "--verify", "a.sig"], "gpg", "", "GNUPGHOME"),
    (
        "uudecode-name-in-file",
        ["sh", "-c", "uudecode x.uu && sh grade.py"],
        "uudecode",
        "marker",
        "uudecode writes the file named inside its input",
    ),
    (
        "uudecode-o",
        ["uudecode", "-o", "grade.py", "y.uu"],
        "uudecode",
        "grade.py",
        "uudecode -o writes",
    ),
    ("tar-c", ["tar", "-cf", "grade.py", "x"], "tar", "grade.py", "tar -f (the archive it writes)"),
    ("tar-c-old-style", ["tar", "cf", "grade.py", "x"], "tar", "grade.py", "tar -f (the archive"),
    (
        "tar-create-long",
        ["tar", "--create", "--file", "grade.py", "x"],
        "tar",
        "grade.py",
        "tar -f (the archive",
    ),
    ("tar-r", ["tar", "-rf", "grade.py", "x"], "tar", "grade.py", "tar -f (the archive"),
    ("tar-value-in-cluster", ["tar", "-cvfgrade.py", "x"], "tar", "grade.py", "tar -f (the"),
    (
        "tar-index-file",
        ["tar", "-tf", "a.tar", "--index-file=grade.py"],
        "tar",
        "grade.py",
        "tar --index-file writes",
    ),
    (
        "tar-listed-incremental",
        ["tar", "-cf", "/dev/null", "-g", "grade.py", "x"],
        "tar",
        "grade.py",
        "tar -g (the snapshot file it writes)",
    ),
    ("tape-env", ["env", "TAPE=grade.py", "tar", "-c", "x"], "tar", "grade.py", "sets TAPE"),
    (
        "touch-creates-in-grading-folder",
        ["touch", "tests/conftest.py"],
        "touch",
        "tests/conftest.py",
        "touch writes to 'tests/conftest.py'",
    ),
    ("touch-reference", ["touch", "-r", "x", "grade.py"], "touch", "grade.py", "touch writes"),
    (
        "rm-then-recreate",
        ["sh", "-c", "rm -f grade.py; zip -q grade.py __main__.py && python3 grade.py"],
        "zip",
        "marker",
        "rm writes to 'grade.py'",
    ),
    (
        "zip-into-grading-folder",
        ["zip", "-q", "tests/suite.zip", "__main__.py"],
        "zip",
        "tests/suite.zip",
        "zip (its archive) writes to 'tests/suite.zip'",
    ),
    (
        "zip-adds-suffix",
        ["zip", "-q", "suite", "__main__.py"],
        "zip",
        "",
        "zip (its archive) writes to 'suite.zip'",
    ),
    (
        "zip-m-deletes-inputs",
        ["zip", "-qm", "o.zip", "grade.py"],
        "zip",
        "grade.py",
        "zip -m (it deletes what it adds) writes to 'grade.py'",
    ),
    ("zip-out", ["zip", "-q", "o.zip", "--out", "grade.py"], "zip", "", "zip --out writes"),
    ("zip-TT", ["zip", "-q", "-T", "-TT", "./x", "o.zip", "a.md"], "zip", "marker", "zip -TT"),
    (
        "curl-o-file-url",
        ["sh", "-c", "curl -s -o grade.py file:///proc/self/cwd/x && sh grade.py"],
        "curl",
        "marker",
        "curl --output writes to 'grade.py'",
    ),
    (
        "curl-O-remote-name",
        ["curl", "-sO", "file:///proc/self/cwd/ws/grade.py"],
        "curl",
        "grade.py",
        "curl -O (the URL's last name",
    ),
    (
        "curl-output-dir",
        ["curl", "-s", "-O", "--output-dir", "tests", "file:///proc/self/cwd/x"],
        "curl",
        "tests/x",
        "curl --output-dir writes to 'tests'",
    ),
    (
        "curl-config",
        ["curl", "-s", "-K", "c.cfg", "file:///proc/self/cwd/x"],
        "curl",
        "grade.py",
        "the config given to curl -K",
    ),
    ("curl-J", ["curl", "-sOJ", "http://127.0.0.1:9/x"], "curl", "", "curl -J writes"),
    (
        "curl-home-env",
        ["env", "CURL_HOME=ws", "curl", "-s", "http://127.0.0.1:9/"],
        "curl",
        "",
        "sets CURL_HOME",
    ),
    (
        "sponge-output",
        ["sh", "-c", "sponge grade.py < x && sh grade.py"],
        "sponge",
        "marker",
        "sponge's output writes",
    ),
]


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


def _state(path: Path) -> tuple[int, int, bytes] | None:
    if not path.exists():
        return None
    status = path.stat()
    return (status.st_ino, status.st_mtime_ns, path.read_bytes())


RUN = [f for f in FORMS if f[3]]


@pytest.mark.parametrize(
    ("tool", "argv", "proof"), [(f[2], f[1], f[3]) for f in RUN], ids=[f[0] for f in RUN]
)
def test_each_form_really_writes_or_runs(
    tmp_path: Path, tool: str, argv: list[str], proof: str
) -> None:
    """Guards against refusing a form that is harmless: run here, it writes the
    grading file it names (or runs the workspace program)."""
    program = shutil.which(argv[0])
    if shutil.which(tool) is None or program is None:
        pytest.skip(f"{tool} is not installed")
    marker = _workspace(tmp_path)
    watched = marker if proof == "marker" else tmp_path / proof
    if watched.exists():
        os.utime(watched, ns=(0, 0))  # so that any write shows in the mtime
    before = _state(watched)
    subprocess.run(
        [program, *argv[1:]],
        cwd=tmp_path,
        env=_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    after = _state(watched)
    # Written, created, replaced or (zip -m) removed.
    assert after != before, f"{argv} did not write {proof} here"


def _task(tmp_path: Path, command: list[str]) -> Path:
    folder = tmp_path / "tasks" / "t"
    (folder / "tests").mkdir(parents=True)
    (folder / "tests" / "test_x.py").write_text("", "utf-8")
    for name in GRADING:
        if name != "tests":
            (folder / name).write_text("", "utf-8")
    body = {
        "name": "t",
        "prompt": "p",
        "grading_files": list(GRADING),
        "verification": [
            {"name": "ok", "role": "correctness", "file": "a.txt", "exists": True},
            {"name": "sneaky", "role": "correctness", "command": command},
        ],
    }
    (folder / "task.yaml").write_text(json.dumps(body), "utf-8")
    return folder / "task.yaml"


@pytest.mark.parametrize(
    ("argv", "reason"), [(f[1], f[4]) for f in FORMS], ids=[f[0] for f in FORMS]
)
def test_each_form_is_refused_at_load_naming_file_check_and_field(
    tmp_path: Path, argv: list[str], reason: str
) -> None:
    """Guards against a check writing over the task's grader (or running the agent's
    filter) and loading: the error names the task file, the check, the field and why."""
    path = _task(tmp_path, argv)
    loaded = load_tasks(tmp_path / "tasks")
    assert loaded.tasks == ()
    [message] = loaded.errors
    assert str(path) in message
    assert "check 'sneaky'" in message and "verification.1.command" in message
    assert "Traceback" not in message
    assert reason in message


@pytest.mark.parametrize("argv", [f[1] for f in FORMS[::6]], ids=[f[0] for f in FORMS[::6]])
def test_audit_tasks_reports_the_forms_as_hackable(tmp_path: Path, argv: list[str]) -> None:
    """Guards against audit-tasks and run disagreeing about one check."""
    task = load_task(_task(tmp_path, argv), allow_workspace_code=True)
    found = [(f.id, f.check, f.hackable) for f in lint_task(task)]
    assert ("runs-workspace-program", "sneaky", True) in found


HONEST: list[list[str]] = [
    ["pandoc", "a.md"],
    ["pandoc", "-t", "plain", "-o", "/tmp/out.txt", "a.md"],
    ["pandoc", "--to=plain", "--wrap=none", "--toc", "-s", "a.md"],
    ["pandoc", "--lua-filter", "check.lua", "a.md"],
    ["pandoc", "--extract-media=media", "-o", "/tmp/out.html", "answer.docx"],
    ["sh", "-c", "pandoc -t plain a.md | grep -q answer"],
    ["xsltproc", "copy.xsl", "doc.xml"],
    ["xsltproc", "-o", "/tmp/out.txt", "--stringparam", "k", "v", "copy.xsl", "doc.xml"],
    ["objcopy", "-O", "binary", "elf", "/tmp/x.bin"],
    ["objcopy", "--dump-section", ".rodata=/dev/stdout", "elf", "/tmp/x.o"],
    ["strip", "-o", "/tmp/x", "elf"],
    ["tidy", "-q", "-e", "answer.html"],
    ["tidy", "-xml", "-q", "-e", "answer.xml"],
    ["tidy", "-numeric", "-q", "page.html"],
    ["tidy", "-q", "--write-back", "no", "page.html"],
    ["openssl", "dgst", "-sha256", "answer.txt"],
    ["openssl", "enc", "-d", "-base64", "-in", "answer.b64"],
    ["openssl", "x509", "-in", "cert.pem", "-noout", "-text"],
    ["openssl", "dgst", "-out", "/tmp/digest", "answer.txt"],
    ["openssl", "pkey", "-in", "key.pem", "-pubout", "-outform", "PEM"],
    ["gpg", "--verify", "answer.sig", "answer.txt"],
    ["gpg", "-d", "answer.gpg"],
    ["gpg", "-o", "/tmp/out", "-d", "answer.gpg"],
    ["gpg", "--list-packets", "answer.gpg"],
    ["uudecode", "-o", "/dev/stdout", "answer.uu"],
    ["tar", "-tf", "out.tar"],
    ["tar", "tf", "out.tar"],
    ["tar", "-xOf", "out.tar", "member.txt"],
    ["tar", "-cf", "/tmp/a.tar", "answer.txt"],
    ["tar", "-czf", "out.tgz", "answer.txt"],
    ["touch", "answer.txt"],
    ["touch", "-r", "grade.py", "answer.txt"],
    ["touch", "-d", "2020-01-01", "out.txt"],
    ["zip", "-q", "/tmp/out.zip", "answer.txt"],
    ["zip", "-qr", "out.zip", "src", "-x", "*.log"],
    ["curl", "-sf", "http://127.0.0.1:8000/health"],
    ["curl", "-s", "-o", "/tmp/page", "http://127.0.0.1:8000/"],
    ["sh", "-c", "curl -s http://127.0.0.1:8000/ | grep -q ok"],
    ["rm", "-f", "tmp.txt"],
]


@pytest.mark.parametrize("argv", HONEST, ids=[" ".join(a) for a in HONEST])
def test_reading_and_writing_elsewhere_still_load(tmp_path: Path, argv: list[str]) -> None:
    """Guards against the rules refusing the same programs reading the workspace as
    data, or writing outside the grading files."""
    _task(tmp_path, argv)
    assert load_tasks(tmp_path / "tasks").errors == ()


def test_fixture_workspace_has_no_stray_marker(tmp_path: Path) -> None:
    assert not _workspace(tmp_path).exists()
