"""``benchguard redaction``: evaluate baseline policies, score a reply, show a prompt.

Thin: parses, calls redaction_pressure's pure modules, prints. The environment is its
own distribution (``environments/redaction_pressure``); benchguard does not depend on it
or on verifiers. When it is not installed, every subcommand exits 2 with one line saying
how to install it. These commands never import verifiers. Bad input (unknown split or
policy, index out of range, unreadable reply file, missing private secret) exits 2 with
one readable line.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from pydantic import BaseModel, ConfigDict

from benchguard.cli._output import bad_input, plain_console
from benchguard.cli._view import print_table

if TYPE_CHECKING:
    from redaction_pressure.corpus import GeneratedTask
    from redaction_pressure.knobs import CorpusKnobs
    from redaction_pressure.splits import SplitSeeds

PRESET_HELP = "Difficulty preset."
# Listed here, not read from the environment: the package may not be installed when
# --help is asked for (the environment refuses unknown names itself).
PRESET_CHOICES = "[intro|easy|standard|hard|expert]"

redaction_app = typer.Typer(
    name="redaction",
    help="Evaluate and inspect the redaction-pressure environment offline "
    "(needs the redaction-pressure package installed). Exit codes: 0 done, 2 bad input "
    "(docs/exit-codes.md).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # as the main app: plain help, no type column
    context_settings={"help_option_names": ["-h", "--help"]},
)

INSTALL_HINT = (
    "the redaction-pressure environment is not installed; install it from a benchguard "
    "checkout with `pip install -e environments/redaction_pressure` (or `make setup`), "
    "or from the Environments Hub with `prime env install <owner>/redaction-pressure`"
)


@redaction_app.callback()
def _require_environment() -> None:
    """Runs before every subcommand: refuse with the install hint when the package is absent."""
    try:
        import redaction_pressure.corpus  # noqa: F401
    except ImportError as error:
        if (error.name or "").split(".")[0] != "redaction_pressure":
            raise  # installed but broken: a real bug, not a missing package
        _bad_input(INSTALL_HINT)


class PolicySummary(BaseModel):
    """One row of ``redaction eval``: a policy's means over the evaluated tasks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: str
    tasks: int
    mean_reward: float
    mean_recall: float
    mean_precision: float
    clean_rate: float
    invalid_rate: float
    mean_scoring_ms: float


class EvalReport(BaseModel):
    """The whole ``redaction eval`` output; names its split and commitment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    split: str
    split_commitment: str
    preset: str
    tasks: int
    policies: tuple[PolicySummary, ...]
    # The effective corpus knobs the preset stands for (added; every other key as before).
    knobs: dict[str, Any] = {}


class ScoreReport(BaseModel):
    """The ``redaction score`` output for one reply on one task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    split: str
    split_commitment: str
    preset: str
    index: int
    policy: str | None
    reward: float
    recall: float
    precision: float
    clean: bool
    valid: bool
    errors: list[str]
    rules: int
    matches: int
    partially_removed_secrets: int
    damaged_decoys: int
    elapsed_ms: float
    # The effective corpus knobs the preset stands for (added; every other key as before).
    knobs: dict[str, Any] = {}


def _bad_input(message: str) -> NoReturn:
    raise bad_input(plain_console(stderr=True), message)


def _seeds(split: str, *, public_only: bool = False) -> SplitSeeds:
    from redaction_pressure.splits import SplitError, SplitSeeds

    if public_only and split not in ("train", "dev"):
        _bad_input(f"split {split!r} is not allowed here; allowed: train, dev")
    try:
        return SplitSeeds(split)
    except SplitError as error:
        _bad_input(str(error))


def _task_seed(seeds: SplitSeeds, index: int) -> int:
    from redaction_pressure.splits import SplitError

    try:
        return seeds.seed(index)
    except SplitError as error:
        _bad_input(str(error))


def _knobs(name: str) -> CorpusKnobs:
    from redaction_pressure.knobs import preset

    try:
        return preset(name)
    except ValueError as error:
        _bad_input(str(error))


def _policy(name: str) -> Callable[[GeneratedTask], str]:
    from redaction_pressure.policies import find_policy

    try:
        return find_policy(name)
    except ValueError as error:
        _bad_input(str(error))


@redaction_app.command("eval")
def eval_command(
    split: Annotated[
        str, typer.Option(help="The split to evaluate.", metavar="[train|dev|private_eval]")
    ] = "dev",
    limit: Annotated[int | None, typer.Option(min=1, help="Evaluate the first N tasks.")] = None,
    policy: Annotated[
        list[str] | None, typer.Option(help="Policy to evaluate (repeatable); default all.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    preset: Annotated[str, typer.Option(help=PRESET_HELP, metavar=PRESET_CHOICES)] = "standard",
) -> None:
    """Score baseline policies over a split and print one table, a row per policy."""
    from redaction_pressure.corpus import generate_task
    from redaction_pressure.policies import POLICIES
    from redaction_pressure.reward import score_reply

    chosen = [(name, _policy(name)) for name in policy or list(POLICIES)]
    knobs = _knobs(preset)
    seeds = _seeds(split)
    count = min(seeds.size, limit) if limit is not None else seeds.size
    tasks = [
        generate_task(seeds.seed(index), seeds.evaluation_key(index), knobs)
        for index in range(count)
    ]
    rows = []
    for name, reply_for in chosen:
        results = [score_reply(reply_for(task), task.evaluation) for task in tasks]
        rows.append(
            PolicySummary(
                policy=name,
                tasks=len(results),
                mean_reward=statistics.fmean(r.reward for r in results),
                mean_recall=statistics.fmean(r.recall for r in results),
                mean_precision=statistics.fmean(r.precision for r in results),
                clean_rate=statistics.fmean(1.0 if r.clean else 0.0 for r in results),
                invalid_rate=statistics.fmean(0.0 if r.valid else 1.0 for r in results),
                mean_scoring_ms=statistics.fmean(r.elapsed_ms for r in results),
            )
        )
    report = EvalReport(
        split=seeds.identity.split,
        split_commitment=seeds.identity.commitment,
        preset=preset,
        tasks=count,
        policies=tuple(rows),
        knobs=knobs.model_dump(mode="json"),
    )
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    label = seeds.identity.label() + ("" if preset == "standard" else f" · preset {preset}")
    _print_table(report, label)
    typer.echo(knobs_lines(report.preset, report.knobs))


def knobs_line(preset: str, knobs: dict[str, Any]) -> str:
    """``preset hard; knobs: example_records=3, secret_families=6-8, ...``: what the
    corpus was generated with, never only the preset's name."""

    def shown(value: Any) -> str:
        if isinstance(value, dict) and set(value) == {"low", "high"}:
            low, high = value["low"], value["high"]
            return str(low) if low == high else f"{low}-{high}"
        if isinstance(value, list):
            return ",".join(str(v) for v in value)
        return str(value)

    return f"preset {preset}; knobs: " + ", ".join(f"{k}={shown(v)}" for k, v in knobs.items())


# The knobs line is folded at this width (at the comma after a knob): the demo's and a
# CI log's lines stay readable and within 200 columns whatever knobs a corpus grows.
KNOBS_WIDTH = 100


def knobs_lines(preset: str, knobs: dict[str, Any], indent: str = "") -> str:
    """:func:`knobs_line` folded after a knob's comma into lines of at most
    :data:`KNOBS_WIDTH` characters; continuation lines indented two more spaces."""
    lines: list[str] = []
    current = indent
    for part in knobs_line(preset, knobs).split(", "):
        piece = part if current.strip() == "" else f" {part}"
        if current.strip() and len(current) + len(piece) + 1 > KNOBS_WIDTH:
            lines.append(current + ",")
            current = f"{indent}  {part}"
        else:
            current = current + ("," if current.strip() else "") + piece
    lines.append(current)
    return "\n".join(lines)


def _print_table(report: EvalReport, split_label: str) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=f"redaction-pressure baselines · split {split_label} · {report.tasks} tasks",
        caption=f"split commitment {report.split_commitment}",
    )
    for column in ("policy", "reward", "recall", "precision", "clean", "invalid", "scoring ms"):
        table.add_column(column, justify="left" if column == "policy" else "right")
    for row in report.policies:
        table.add_row(
            Text(row.policy),
            f"{row.mean_reward:.4f}",
            f"{row.mean_recall:.4f}",
            f"{row.mean_precision:.4f}",
            f"{row.clean_rate:.2%}",
            f"{row.invalid_rate:.2%}",
            f"{row.mean_scoring_ms:.2f}",
        )
    # A Rich table on a terminal; plain aligned lines in a pipe or a CI log.
    print_table(plain_console(), table)


@redaction_app.command("score")
def score_command(
    index: Annotated[int, typer.Option(help="Task index within the split.")],
    split: Annotated[str, typer.Option(help="The split.", metavar="[train|dev]")] = "dev",
    reply_file: Annotated[
        Path | None, typer.Option(help="File holding the model reply to score.")
    ] = None,
    policy: Annotated[str | None, typer.Option(help="Score this baseline's reply.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    preset: Annotated[str, typer.Option(help=PRESET_HELP, metavar=PRESET_CHOICES)] = "standard",
) -> None:
    """Score one reply (from a file or a baseline policy) on one task."""
    from redaction_pressure.corpus import generate_task
    from redaction_pressure.reward import score_reply

    if (reply_file is None) == (policy is None):
        _bad_input("give exactly one of --reply-file or --policy")
    knobs = _knobs(preset)
    seeds = _seeds(split, public_only=True)
    task = generate_task(_task_seed(seeds, index), knobs=knobs)
    if policy is not None:
        reply = _policy(policy)(task)
    elif reply_file is not None:
        try:
            reply = reply_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            _bad_input(f"cannot read reply file {reply_file}: {error}")
    else:  # unreachable after the check above; explicit, so it survives python -O
        _bad_input("give exactly one of --reply-file or --policy")
    result = score_reply(reply, task.evaluation)
    report = ScoreReport(
        split=seeds.identity.split,
        split_commitment=seeds.identity.commitment,
        preset=preset,
        index=index,
        policy=policy,
        reward=result.reward,
        recall=result.recall,
        precision=result.precision,
        clean=result.clean,
        valid=result.valid,
        errors=list(result.errors),
        rules=result.rules,
        matches=result.matches,
        partially_removed_secrets=result.partially_removed_secrets,
        damaged_decoys=result.damaged_decoys,
        elapsed_ms=result.elapsed_ms,
        knobs=knobs.model_dump(mode="json"),
    )
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json")))
        return
    typer.echo(f"split {report.split} task {index}: reward {report.reward:.4f}")
    typer.echo(
        f"  recall {report.recall:.4f}  precision {report.precision:.4f}  "
        f"clean {report.clean}  valid {report.valid}  {report.elapsed_ms:.2f} ms"
    )
    for message in report.errors:
        typer.echo(f"  error: {message}")
    typer.echo(knobs_lines(report.preset, report.knobs, indent="  "))


@redaction_app.command("show")
def show_command(
    index: Annotated[int, typer.Option(help="Task index within the split.")],
    split: Annotated[str, typer.Option(help="The split.", metavar="[train|dev]")] = "dev",
    preset: Annotated[str, typer.Option(help=PRESET_HELP, metavar=PRESET_CHOICES)] = "standard",
) -> None:
    """Print the prompt exactly as the model receives it (system, then user message)."""
    from redaction_pressure.corpus import generate_task
    from redaction_pressure.prompt import SYSTEM_PROMPT, render_prompt

    knobs = _knobs(preset)
    seeds = _seeds(split, public_only=True)
    task = generate_task(_task_seed(seeds, index), knobs=knobs)
    typer.echo(f"=== system ===\n{SYSTEM_PROMPT}\n=== user ===\n{render_prompt(task)}", nl=False)


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.add_typer(redaction_app, name="redaction")
