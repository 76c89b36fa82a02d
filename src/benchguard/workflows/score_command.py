"""``benchguard score`` as one call: its options as given in, a printable result out.

:func:`score_command` combines the options with the configuration file, checks them (a
:class:`BadInputError` naming the flag and what is allowed, before anything is read),
loads the rules and dismissals, and scores every input through
:func:`benchguard.workflows.score.score_files`. The CLI prints the
:class:`ScoreResult` and exits with its :attr:`ScoreResult.exit_code`.

An option of ``score`` is a field of :class:`ScoreOptions` with the parameter's name
(the command passes them all by name), so adding one is a parameter and a field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchguard.detection.models import Rule
from benchguard.detection.profile_choice import AUTO, union_rules
from benchguard.detection.rules import load_ruleset
from benchguard.engines import engine_choice_problem
from benchguard.errors import BadInputError
from benchguard.results.dismissals import load_dismissals
from benchguard.results.formats import parse_output_format
from benchguard.workflows.foreign import foreign_knowledge
from benchguard.workflows.profiles import named_choice, profile_names
from benchguard.workflows.score import ScoreOutcome, ScoreRequest, score_files
from benchguard.workflows.settings import values


@dataclass(frozen=True)
class ScoreOptions:
    """The command's options as given; ``None`` means the configuration file's value,
    else the built-in default. Each field is the flag of the same name."""

    results: Sequence[Path]
    profile: Sequence[str] | None = None
    rules: Path | None = None
    dismissals: Path | None = None
    engine: str | None = None
    scheduler: str | None = None
    workers: int | None = None
    out_dir: Path | None = None
    output_format: str | None = None
    fail_on_review: bool = False
    material: Path | None = None
    repo: Path | None = None
    base_commit: str | None = None
    instances: Path | None = None


@dataclass
class ScoreResult:
    """What scoring did, and the choices its output is printed with."""

    outcome: ScoreOutcome
    # table, json, sarif or junit.
    output_format: str
    # Every profile asked for, in order (``auto`` among them: chosen per input).
    profiles: tuple[str, ...]
    # The rules the rescan used (``auto``: the union of every input's choice), for SARIF.
    rules: Sequence[Rule]

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code


def score_command(options: ScoreOptions) -> ScoreResult:
    """Check the options and score every input; a
    :class:`benchguard.errors.BenchguardError` when nothing could be scored."""
    settings = values(
        {
            "profile": None,
            "rules": options.rules,
            "dismissals": options.dismissals,
            "engine": options.engine,
            "scheduler": options.scheduler,
            "workers": options.workers,
            "format": options.output_format,
        }
    )
    chosen = parse_output_format(settings["format"])
    engine_problem = engine_choice_problem(settings["engine"], settings["scheduler"])
    if engine_problem is not None:
        raise BadInputError(engine_problem)
    names = profile_names(options.profile, settings["profile"])
    named = named_choice(names, settings["rules"])
    rules = named.rules if named is not None else load_ruleset(AUTO, settings["rules"])
    entries = load_dismissals(settings["dismissals"]) if settings["dismissals"] else ()
    outcome = score_files(
        ScoreRequest(
            paths=options.results,
            rules=rules,
            dismissals=entries,
            out_dir=options.out_dir,
            engine="dask" if settings["engine"] == "dask" else "serial",
            scheduler=settings["scheduler"],
            workers=settings["workers"],
            profiles=names,
            extra_rules=settings["rules"],
            knowledge=foreign_knowledge(
                material=options.material,
                repo=options.repo,
                base_commit=options.base_commit,
                instances=options.instances,
            ),
        )
    )
    outcome.fail_on_review = options.fail_on_review
    if outcome.choices:
        # auto: every input's rules were chosen for it; SARIF describes all of them.
        rules = union_rules(("", choice.rules) for choice in outcome.choices.values())
    return ScoreResult(outcome, chosen, names, rules)


__all__ = ["ScoreOptions", "ScoreResult", "score_command"]
