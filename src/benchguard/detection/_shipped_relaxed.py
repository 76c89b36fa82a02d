"""Relaxed forms of the shipped profiles' patterns, derived once and stored with them.

Every process that scans relaxes each pattern of its ruleset into an RE2 superset
(``_relax``) before it builds the prefilter: for the 126 patterns a default scan of
mixed logs uses, about 0.3 s of a fresh process's CPU, paid again by every
``benchguard scan``. ``_relaxed_forms.json`` holds what :func:`_prefilter.derive`
gives for each pattern of every built-in profile (``None`` for one that must run
everywhere), written by :func:`write` (``python -c 'from benchguard.detection import _prefilter as p, _shipped_relaxed as s;
s.write(p.derive)'``).

The table is a fact about the pattern texts *and* the code that relaxes them, so it
carries the SHA-256 of ``_relax.py``'s source and the Python version whose regex
parser read the patterns; when either differs (the relaxer changed, another Python) the
table is not used at all and every form is derived as before. A pattern it does not
hold (a rule changed since it was written, a user's rule) is derived too: a stale or
missing table costs only time. ``tests/detection/test_shipped_relaxed.py`` holds every
entry to the derivation.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
TABLE = _HERE / "_relaxed_forms.json"
_RELAXER = _HERE / "_relax.py"


def stamp() -> dict[str, str]:
    """What the table's forms depend on besides the patterns: the relaxer's source and
    the Python version (``{}`` when the source cannot be read)."""
    try:
        source = _RELAXER.read_bytes()
    except OSError:
        return {}
    return {
        "relax_sha256": hashlib.sha256(source).hexdigest(),
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
    }


@functools.lru_cache(maxsize=1)
def shipped_forms() -> dict[str, str | None]:
    """The table's forms, by pattern; empty when it is missing, malformed or stale."""
    try:
        document: Any = json.loads(TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    current = stamp()
    if not isinstance(document, dict) or not current or document.get("stamp") != current:
        return {}
    forms = document.get("forms")
    if not isinstance(forms, dict):
        return {}
    return {
        pattern: form
        for pattern, form in forms.items()
        if isinstance(pattern, str) and (form is None or isinstance(form, str))
    }


def shipped_patterns() -> list[str]:
    """Every distinct pattern of every built-in profile, sorted."""
    from benchguard.detection.rules import load_profile, profile_names

    return sorted({p for name in profile_names() for r in load_profile(name) for p in r.patterns})


def write(derive: Callable[[str], str | None], path: Path = TABLE) -> int:
    """Derive (by ``_prefilter.derive``, passed in: this module sits below the
    prefilter) and write the table; returns how many forms it holds."""
    forms = {pattern: derive(pattern) for pattern in shipped_patterns()}
    document = {"stamp": stamp(), "forms": forms}
    path.write_text(json.dumps(document, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    return len(forms)
