"""The profiles a command was asked for: every repeated ``--profile`` (their union, in
the order given, never only the last), else the configured one (``auto`` by default).

``scan``, ``score``, ``run`` and ``inventory`` all read ``--profile`` through
:func:`profile_names`, so they behave the same and can name every profile used. The
union and ``auto`` themselves are :func:`benchguard.detection.profile_choice.resolve_profiles`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchguard.detection.profile_choice import AUTO, ProfileChoice, resolve_profiles
from benchguard.errors import BadInputError


def profile_names(flags: Sequence[str] | None, configured: object) -> tuple[str, ...]:
    """The names given (duplicates dropped, order kept), else the configured value (a
    name, or a list of names in a config file)."""
    if flags:
        return tuple(dict.fromkeys(flags))
    if isinstance(configured, list | tuple):
        return tuple(dict.fromkeys(str(name) for name in configured)) or (AUTO,)
    return (str(configured),)


def named_choice(names: Sequence[str], extra_rules: Path | None) -> ProfileChoice | None:
    """The union of ``names`` and the extra rules, loaded once for every input; ``None``
    when ``auto`` is among them (each input's profiles are then chosen from it)."""
    if AUTO in names:
        return None
    return resolve_profiles(names, extra_rules=extra_rules)


def describe_names(names: Sequence[str]) -> str:
    """``swe-bench + inspect``: every profile named, for a summary line."""
    return " + ".join(names)


def one_profile_for_run(flags: Sequence[str] | None) -> str | None:
    """The one profile ``run`` gives its harness (``None``: the configured one).

    The harness builds a batch's rules, home baseline and material fingerprints from a
    single profile, so a run cannot take a union yet; several names are refused (bad
    input) rather than one kept silently. ``scan`` and ``score`` take the union.
    """
    names = list(dict.fromkeys(flags or ()))
    if len(names) > 1:
        raise BadInputError(
            f"--profile given {len(names)} times ({', '.join(names)}): benchguard run uses "
            "one profile per batch; give one (scan and score of its results.json take the "
            "union of several)"
        )
    return names[0] if names else None


__all__ = ["describe_names", "named_choice", "one_profile_for_run", "profile_names"]
