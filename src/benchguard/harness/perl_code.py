"""Whether inline perl code a check gives (``perl -ne '...' answer.txt``) can run a
program, load code or write a file.

Perl cannot be parsed from outside, so perl itself reads the text: a small reader
script compiles the code, never running it, with an operation mask (the core
``Opcode`` module) that admits only the ops that compute, match, read standard input,
the files ``<>`` reads, and print. ``system``, backticks, ``exec``, ``fork``,
``open``, ``unlink``, ``require``/``use``/``do FILE``, string ``eval`` (so ``s///ee``
too), method calls, ``tie`` and the rest are refused by name, wherever they stand in
the text: in a named or anonymous sub, a ``BEGIN`` or ``END`` block, a substitution's
replacement. What perl then runs is what it compiled, so the mask holds at run time.

The mask cannot see a call made by name at run time to code the text does not hold:
a symbolic code or glob reference (``&{"Dyna" . "Loader::..."}``, ``*{"..."}``,
``*x = "..."``), a signal or warning handler named by a string, a sub name taken from
a variable by ``sort``, or the stash. Those forms are refused from the text first
(:data:`_TEXT_REFUSED`), as are ``@ARGV`` (``<>`` opens each name with
two-argument open, where ``x|`` runs a program) and perl's special variables
(``$^I`` turns ``<>`` into in-place editing).

Bounds: the caller's text bound (``check_programs.MAX_CHARS``), then
:data:`TIMEOUT_SECONDS` and :data:`MEMORY_BYTES` for the reader (constant folding
runs at compile time: ``"a" x 1e12``). Perl missing, a timeout, or output the reader
does not recognise refuse the check (fail closed).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

TIMEOUT_SECONDS = 5.0
MEMORY_BYTES = 512 << 20

# The reader. The allowed tags (Opcode's :default, the I/O, math and file-test ops)
# still hold ops that create files (dbmopen), sockets and pipes, or call code by a name
# (method calls, tie), so those are taken out. string eval, require and do FILE are in
# none of the tags. It builds the mask first (Opcode and POSIX are loaded before it),
# then compiles the code inside an anonymous sub it never calls.
#
# The verdict goes to a pipe of its own (the descriptor in the second argument), not to
# standard output: the code's BEGIN blocks run while it compiles, with print and exit
# allowed, so anything on standard output may be the code's own ("OK", then exit).
# compile_code is defined before any file-level variable, so the compiled text cannot
# name the verdict's handle, and it cannot open the descriptor (open is masked). The
# reader leaves with _exit, so END blocks the code declared never run here.
_READER = r"""
sub compile_code {
    my ($text, $say) = @_;
    if ($say) { use feature qw(say state fc); return eval "sub {\n$text\n}"; }
    return eval "sub {\n$text\n}";
}
use Opcode qw(opset opmask_add invert_opset);
use POSIX ();
my ($say, $fd) = @ARGV;
@ARGV = ();
my $code = do { local $/; <STDIN> };
my $allowed = opset(qw(:default :base_io :base_math :filesys_read
  exit time localtime gmtime sort binmode rv2gv));
my $denied = opset(qw(dbmopen dbmclose pipe_op sockpair tie untie sselect select
  send recv method method_named method_super method_redir method_redir_super));
opmask_add(invert_opset($allowed & invert_opset($denied)));
my $compiled = compile_code($code, $say);
my $why = substr($@, 0, 2000);
$why =~ s/\s+/ /g;
open(my $verdict, ">&=", $fd) or POSIX::_exit(3);
print {$verdict} (defined $compiled ? "OK\n" : "REFUSED\t$why\n");
close($verdict);
POSIX::_exit(0);
"""
# The reader's bounds, set by the shell that execs it (no preexec_fn: the task loader
# may run beside other threads).
_BOUNDED_EXEC = f'ulimit -v {MEMORY_BYTES >> 10} && exec "$@"'
_VERDICT_BYTES = 4096

# Forms that call code by a name computed at run time, which no op mask can see: perl
# without ``strict refs`` takes any string as a name (``"Dyna" . "Loader::..."``), and a
# perl started plainly holds a sub that loads shared objects
# (DynaLoader::boot_DynaLoader).
_TEXT_REFUSED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<!&)&(?!&)\s*[{$]"), "calls a sub through a reference or a name it computes"),
    (re.compile(r"->\s*\("), "calls a sub through a reference or a name it computes"),
    (re.compile(r"\bgoto\b"), "jumps to a sub (goto), which may be named at run time"),
    (re.compile(r"\*\s*\{|\*[\w:']+\s*="), "makes a glob from a name (a symbolic glob)"),
    (re.compile(r"\bSIG\b"), "sets a signal or warning handler, which may be a sub's name"),
    (re.compile(r"\bsort\s+\$"), "sorts with a sub named by a variable"),
    (re.compile(r"\bARGV\b"), "changes @ARGV, whose names <> opens with two-argument open"),
    (re.compile(r"\$\^|\$\{\^"), "sets perl's special variables ($^I edits files in place)"),
    (
        re.compile(r"\b(DynaLoader|XSLoader|dl_\w+|boot_\w*|CORE::GLOBAL|UNIVERSAL)\b"),
        "reaches the loader or the method resolution of every class",
    ),
)
_GLOB_DEREFERENCE = re.compile(r"\*\s*\$")
# What ends an operand: a * after one is multiplication, elsewhere a glob.
_OPERAND_END = re.compile(r"[\w\])}'\"]")
_TRAPPED = re.compile(r"'([^']+)' trapped by operation mask")


def perl_inline_problem(code: str, *, say: bool = False) -> str | None:
    """Why ``perl -e code`` can run a program, load code or write a file; None if not.
    ``say`` for ``-E``, which turns on the newer keywords."""
    problem = _text_problem(code)
    if problem is not None:
        return f"the inline perl code {problem}"
    perl = shutil.which("perl", path="/usr/bin:/bin")
    if perl is None:
        return "the inline perl code cannot be read: perl is not installed here"
    out, returncode, failure = _read_verdict(perl, code, say)
    if failure is not None:
        return failure
    if out == "OK\n":
        return None
    if out.startswith("REFUSED\t"):
        trapped = _TRAPPED.search(out)
        if trapped is not None:
            return f"the inline perl code uses {trapped.group(1)!r}, which a check may not"
        said = out.split("\t", 1)[1][:200].strip()
        return f"the inline perl code does not compile (perl: {said})"
    return (
        f"the inline perl code cannot be read: perl's reader exited {returncode} "
        f"without a verdict (its bounds: {TIMEOUT_SECONDS:g} s, {MEMORY_BYTES >> 20} MiB)"
    )


def _text_problem(code: str) -> str | None:
    for pattern, reason in _TEXT_REFUSED:
        if pattern.search(code):
            return reason
    for found in _GLOB_DEREFERENCE.finditer(code):
        before = code[: found.start()].rstrip()
        if not before or not _OPERAND_END.fullmatch(before[-1]):
            return "dereferences a glob (*$name), which may be named at run time"
    return None


def _read_verdict(perl: str, code: str, say: bool) -> tuple[str, int | None, str | None]:
    """The reader's verdict from its own pipe, its exit code, and why there is none
    (a timeout, perl not starting)."""
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    try:
        argv = ["/bin/sh", "-c", _BOUNDED_EXEC, "sh", perl, "-e", _READER]
        argv += ["1" if say else "0", str(write_end)]
        try:
            done = subprocess.run(
                argv,
                input=code.encode("utf-8", "surrogateescape"),
                capture_output=True,
                timeout=TIMEOUT_SECONDS,
                env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
                pass_fds=(write_end,),
                check=False,
            )
        except subprocess.TimeoutExpired:
            return (
                "",
                None,
                f"the inline perl code took perl more than {TIMEOUT_SECONDS:g} s to read",
            )
        except OSError as exc:
            return (
                "",
                None,
                f"the inline perl code cannot be read: perl did not start ({exc.strerror})",
            )
        os.close(write_end)
        write_end = -1
        verdict = os.read(read_end, _VERDICT_BYTES).decode("utf-8", "replace")
        return verdict, done.returncode, None
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
