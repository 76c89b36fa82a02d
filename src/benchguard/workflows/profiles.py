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


__all__ = ["describe_names", "named_choice", "profile_names"]
