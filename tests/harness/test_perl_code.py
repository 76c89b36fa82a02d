"""perl reads a check's inline perl code under its bounds, and what it cannot read is
refused (issue 19, 3: a check never runs a workspace file)."""

from __future__ import annotations

import shutil

import pytest

from benchguard.harness.perl_code import perl_inline_problem


def test_compile_time_work_is_bounded_by_memory() -> None:
    """Guards against constant folding ("a" x 1e12) exhausting the loader's memory."""
    problem = perl_inline_problem('$x = "a" x 1e12')
    assert problem is not None and "512 MiB" in problem


def test_compile_time_loops_are_bounded_by_time() -> None:
    """Guards against a BEGIN block that never ends hanging the task loader."""
    problem = perl_inline_problem("BEGIN { 1 while 1 }")
    assert problem is not None and "more than 5 s" in problem


def test_end_blocks_never_run_in_the_reader() -> None:
    """Guards against the reader running the code it reads: an END block that loops
    would hold it until the time bound."""
    assert perl_inline_problem("END { 1 while 1 } print 1") is None


def test_code_that_does_not_compile_is_refused_with_perls_words() -> None:
    problem = perl_inline_problem("sub {")
    assert (
        problem is not None and "does not compile" in problem and "Missing right curly" in problem
    )


def test_say_needs_minus_capital_e() -> None:
    """-E turns on say, as perl does; -e leaves it a syntax error."""
    assert perl_inline_problem("say 137", say=True) is None
    assert perl_inline_problem("say 137") is not None


def test_no_perl_means_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards against clearing code that nothing read (fail closed)."""
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    problem = perl_inline_problem("print 1")
    assert problem is not None and "perl is not installed" in problem


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("$s = $a *$b; print $s", None),
        ("@g = *$x", "dereferences a glob"),
        ("print 1 if $a && $b", None),
        ("$x = \\&{'f'}", "calls a sub through a reference"),
        ("local $SIG{__WARN__} = 'f'; warn 1", "signal or warning handler"),
        ("print sort $by 1, 2", "sorts with a sub named by a variable"),
        ("$^I = ''", "special variables"),
        ("UNIVERSAL::can('x', 'y')", "method resolution"),
        ("goto &f", "goto"),
    ],
)
def test_calls_by_a_computed_name_are_refused_from_the_text(
    code: str, expected: str | None
) -> None:
    """Guards against the forms the op mask cannot see: each runs code the text does
    not hold, by a name computed at run time."""
    problem = perl_inline_problem(code)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and expected in problem


@pytest.mark.parametrize(
    "code",
    [
        'BEGIN { print "OK\\n"; exit 0 } system("./x")',
        'BEGIN { print "BENCHGUARD-PERL-OK\\n"; exit 0 } system("./x")',
        'BEGIN { print STDERR "OK\\n"; exit 0 } system("./x")',
    ],
)
def test_the_code_cannot_forge_the_readers_verdict(code: str) -> None:
    """Guards against a BEGIN block, which runs while the code compiles with print and
    exit allowed, writing the verdict and leaving before the mask refuses the rest:
    the verdict comes only through the reader's own pipe (checked: with the verdict
    on standard output the one naming its marker loaded as sound)."""
    problem = perl_inline_problem(code)
    assert problem is not None and "without a verdict" in problem
