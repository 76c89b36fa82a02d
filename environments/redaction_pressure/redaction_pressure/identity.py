"""Environment identity: which code and data produced a task and scored a trace.

The source digest covers exactly the modules whose bytes can change a task, its prompt
or its score (:data:`DIGESTED_SOURCES`), read from the installed package directory in
sorted name order. Left out on purpose: ``__init__.py`` (lazy re-exports only),
``identity.py`` (bookkeeping), ``policies.py`` (baselines: they produce replies, they
never judge one).

Digest format: SHA-256 over, for each file in sorted order,
``name + b"\\0" + str(len(bytes)) + b"\\0" + bytes``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
from pathlib import Path

import regex
from pydantic import BaseModel, ConfigDict

from redaction_pressure.corpus import CORPUS_VERSION
from redaction_pressure.knobs import CorpusKnobs
from redaction_pressure.reward import RewardSchema
from redaction_pressure.splits import SplitIdentity

ENVIRONMENT_ID = "redaction-pressure"
MATCHER = f"regex {regex.__version__}"
"""The matcher the rules run on: its version decides what a pattern matches."""


def _installed_version() -> str:
    """The distribution's version: written once, in pyproject.toml."""
    try:
        return importlib.metadata.version(ENVIRONMENT_ID)
    except importlib.metadata.PackageNotFoundError:
        # Imported from a bare source tree: an identity would name no version, so refuse.
        raise RuntimeError(
            "redaction_pressure is imported but the redaction-pressure distribution is not "
            "installed, so its version is unknown; install it: "
            "pip install -e environments/redaction_pressure"
        ) from None


ENVIRONMENT_VERSION = _installed_version()

DIGESTED_SOURCES: tuple[str, ...] = (
    "corpus.py",
    "keyed_stream.py",
    "knobs.py",
    "prompt.py",
    "records.py",
    "reward.py",
    "rules.py",
    "scanner.py",
    "scoring_pool.py",
    "splits.py",
    "taskset.py",
)

_PACKAGE_DIR = Path(__file__).resolve().parent


class EnvironmentIdentity(BaseModel):
    """Recorded with every task and repeated under ``trace.info["environment"]``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    environment: str
    environment_version: str
    corpus_version: str
    reward_schema_version: str
    split: str
    split_commitment: str
    source_digest: str
    corpus_knobs: CorpusKnobs = CorpusKnobs()
    """The difficulty knobs the tasks were generated with."""
    reward_schema: RewardSchema = RewardSchema()
    """The contract version and the weights the reward is summed with."""
    matcher: str = MATCHER
    """The regex engine and its version (``regex 2026.11.19``)."""
    preset: str | None = None
    """The preset the knobs started from (``--env.taskset.preset``); None when the knobs
    were given without one (or by a caller of :func:`environment_identity` that did not
    say). With knob flags on top, ``corpus_knobs`` holds the result."""


def source_digest(package_dir: Path | None = None) -> str:
    """SHA-256 of the digested sources in ``package_dir`` (the installed package)."""
    return _digest(package_dir or _PACKAGE_DIR)


@functools.lru_cache(maxsize=4)
def _digest(package_dir: Path) -> str:
    hasher = hashlib.sha256()
    for name in sorted(DIGESTED_SOURCES):
        path = package_dir / name
        try:
            data = path.read_bytes()
        except OSError as error:
            raise RuntimeError(f"cannot digest behaviour-bearing source {path}: {error}") from error
        hasher.update(name.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
        hasher.update(data)
    return "sha256:" + hasher.hexdigest()


def environment_identity(
    split: SplitIdentity,
    knobs: CorpusKnobs | None = None,
    reward_schema: RewardSchema | None = None,
    preset: str | None = None,
) -> EnvironmentIdentity:
    """The identity of this installed environment serving ``split`` with ``knobs``."""
    from redaction_pressure.reward import REWARD_SCHEMA_VERSION

    return EnvironmentIdentity(
        environment=ENVIRONMENT_ID,
        environment_version=ENVIRONMENT_VERSION,
        corpus_version=CORPUS_VERSION,
        reward_schema_version=REWARD_SCHEMA_VERSION,
        split=split.split,
        split_commitment=split.commitment,
        source_digest=source_digest(),
        corpus_knobs=CorpusKnobs() if knobs is None else knobs,
        reward_schema=RewardSchema() if reward_schema is None else reward_schema,
        matcher=MATCHER,
        preset=preset,
    )
