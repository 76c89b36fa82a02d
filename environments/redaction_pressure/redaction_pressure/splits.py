"""Splits: which task seeds a split holds, and the commitment that names the split.

* ``train`` and ``dev`` are public: seeds are ``base + index`` over disjoint ranges.
* ``private_eval`` seeds are ``HMAC-SHA256(secret, f"private_eval:{index}")`` with the
  secret read from ``REDACTION_PRESSURE_PRIVATE_SEED``; the top bit is set so a private
  seed can never coincide with a public one. The secret itself goes nowhere: reports and
  traces carry only its SHA-256 commitment.
* Evaluation keys (which key the stream the scored records come from, see corpus.py):
  public tasks derive theirs from the seed; private_eval tasks from the secret, with a
  message distinct from the seed's, so a task seed (even one recovered from the prompt's
  example stream) does not yield its evaluation key.

A :class:`SplitIdentity` is the one value every table, report and trace uses to name
its split. It validates its own commitment, so a dev result cannot be relabelled as a
private evaluation: the public commitments are fixed strings, and a private identity
carrying one of them is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, model_validator

from redaction_pressure.corpus import public_evaluation_key

SplitName = Literal["train", "dev", "private_eval"]
SPLIT_NAMES: tuple[SplitName, ...] = get_args(SplitName)

TRAIN_SEED_BASE = 10_000_000
TRAIN_SIZE = 1_000_000
DEV_SEED_BASE = 20_000_000
DEV_SIZE = 64
PRIVATE_EVAL_DEFAULT_SIZE = 64
PRIVATE_SEED_ENV = "REDACTION_PRESSURE_PRIVATE_SEED"
PRIVATE_SEED_MIN_CHARS = 32
_PRIVATE_SEED_FLOOR = 1 << 63

_PUBLIC_RANGES: dict[str, tuple[int, int]] = {
    "train": (TRAIN_SEED_BASE, TRAIN_SIZE),
    "dev": (DEV_SEED_BASE, DEV_SIZE),
}


class SplitError(ValueError):
    """A split name, index or private secret is not usable; the message says why."""


def _public_commitment(split: str) -> str:
    base, size = _PUBLIC_RANGES[split]
    text = f"redaction-pressure/public-split/{split}/seeds={base}+[0,{size})"
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


PUBLIC_COMMITMENTS: dict[str, str] = {name: _public_commitment(name) for name in _PUBLIC_RANGES}


def secret_commitment(secret: str) -> str:
    """The SHA-256 commitment to a private secret, as recorded in traces."""
    return "sha256:" + hashlib.sha256(secret.encode("utf-8")).hexdigest()


class SplitIdentity(BaseModel):
    """Names a split and commits to its seed source."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    split: SplitName
    commitment: str

    @model_validator(mode="after")
    def _commitment_matches_split(self) -> SplitIdentity:
        public = PUBLIC_COMMITMENTS.get(self.split)
        if public is not None and self.commitment != public:
            raise ValueError(f"split {self.split!r} must carry its public commitment {public}")
        if self.split == "private_eval" and self.commitment in PUBLIC_COMMITMENTS.values():
            raise ValueError("a private_eval identity cannot carry a public split's commitment")
        if not self.commitment.startswith("sha256:") or len(self.commitment) != 71:
            raise ValueError("commitment must be 'sha256:' followed by 64 hex digits")
        return self

    @property
    def is_private(self) -> bool:
        return self.split == "private_eval"

    def label(self) -> str:
        """How tables title the split: the name and a short commitment prefix."""
        return f"{self.split} ({self.commitment[:19]})"


def check_split(split: str) -> SplitName:
    """``split`` as a :data:`SplitName`, or a :class:`SplitError` listing the choices."""
    for name in SPLIT_NAMES:
        if split == name:
            return name
    raise SplitError(f"unknown split {split!r}; allowed: {', '.join(SPLIT_NAMES)}")


def read_private_secret(environ: Mapping[str, str] | None = None) -> str:
    """The private secret from the environment; refuses a missing or short one."""
    env = os.environ if environ is None else environ
    secret = env.get(PRIVATE_SEED_ENV, "")
    if len(secret) < PRIVATE_SEED_MIN_CHARS:
        state = "is not set" if not secret else f"holds {len(secret)} characters"
        raise SplitError(
            f"{PRIVATE_SEED_ENV} {state}; the private_eval split needs a secret of at "
            f"least {PRIVATE_SEED_MIN_CHARS} characters"
        )
    return secret


def private_task_seed(secret: str, index: int) -> int:
    """The private task seed for ``index``: a 64-bit HMAC-derived integer >= 2**63."""
    if len(secret) < PRIVATE_SEED_MIN_CHARS:
        raise SplitError(
            f"{PRIVATE_SEED_ENV} must hold at least {PRIVATE_SEED_MIN_CHARS} characters"
        )
    if index < 0:
        raise SplitError(f"index {index} is negative")
    digest = hmac.new(
        secret.encode("utf-8"), f"private_eval:{index}".encode(), hashlib.sha256
    ).digest()
    return _PRIVATE_SEED_FLOOR | int.from_bytes(digest[:8], "big")


def private_evaluation_key(secret: str, index: int) -> bytes:
    """The evaluation-stream key of private task ``index``: HMAC of the secret only."""
    if len(secret) < PRIVATE_SEED_MIN_CHARS:
        raise SplitError(
            f"{PRIVATE_SEED_ENV} must hold at least {PRIVATE_SEED_MIN_CHARS} characters"
        )
    if index < 0:
        raise SplitError(f"index {index} is negative")
    message = f"private_eval:evaluation-key:{index}".encode()
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).digest()


def public_task_seed(split: str, index: int) -> int:
    """The seed of task ``index`` of the public ``train`` or ``dev`` split."""
    if split not in _PUBLIC_RANGES:
        raise SplitError(f"split {split!r} has no public seeds; public splits: train, dev")
    base, size = _PUBLIC_RANGES[split]
    if not 0 <= index < size:
        raise SplitError(f"index {index} is outside split {split!r} (0..{size - 1})")
    return base + index


def split_size(split: SplitName, private_size: int = PRIVATE_EVAL_DEFAULT_SIZE) -> int:
    return _PUBLIC_RANGES[split][1] if split in _PUBLIC_RANGES else private_size


class SplitSeeds:
    """Resolves task indices of one split to seeds; holds the private secret if any.

    The secret stays inside this object: :attr:`identity` exposes only its commitment.
    """

    def __init__(
        self,
        split: str,
        *,
        private_size: int = PRIVATE_EVAL_DEFAULT_SIZE,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.split: SplitName = check_split(split)
        self._secret: str | None = None
        if self.split == "private_eval":
            self._secret = read_private_secret(environ)
            commitment = secret_commitment(self._secret)
        else:
            commitment = PUBLIC_COMMITMENTS[self.split]
        self.size = split_size(self.split, private_size)
        self.identity = SplitIdentity(split=self.split, commitment=commitment)

    def seed(self, index: int) -> int:
        if not 0 <= index < self.size:
            raise SplitError(f"index {index} is outside split {self.split!r} (0..{self.size - 1})")
        if self._secret is not None:
            return private_task_seed(self._secret, index)
        return public_task_seed(self.split, index)

    def evaluation_key(self, index: int) -> bytes:
        """The key of task ``index``'s evaluation stream (see corpus.generate_task)."""
        seed = self.seed(index)  # validates the index
        if self._secret is not None:
            return private_evaluation_key(self._secret, index)
        return public_evaluation_key(seed)

    def __repr__(self) -> str:  # never show the secret
        return f"SplitSeeds(split={self.split!r}, size={self.size})"
