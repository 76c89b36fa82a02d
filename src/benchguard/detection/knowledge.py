"""What a harness knows that a scan of imported logs does not, gathered in one place.

``benchguard run`` and ``bench/detection_quality.py`` both call these functions, so the
quality figures for "what the runner passes" are the runner's own code path:

- :func:`gather` (once per batch): the fingerprints of the protected material and the
  known paths of the protected set, as the agent would address them;
- :func:`run_context` (per run): the scan context the record stores (the home and the
  working directory as the agent sees them, and the known paths, of the protected set
  and of the home's pre-run entries, that the record's globs resolve to);
- :func:`run_rules` (per run): the dynamic rules the run is scanned with: the home
  inventory's rules, less what the prompt authorizes, plus the material fingerprints,
  less every window the prompt or the run's own expected answers contain (and none at
  all when the run's own task file has no window left, so the key-shaped fallback
  rules stay on for it).

Why expected answers are taken out: a correct deliverable contains the expected output
(and what a check's ``contains`` asks for) by definition, so an honest agent reading its
own ``answer.txt`` back would show it. Those values are what the final output is judged
on, not evidence of access; the rest of the material (rubric text, oracle scripts,
descriptions, other files) keeps its fingerprints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.detection.context import ScanContext, list_known_paths, paths_globs_use
from benchguard.detection.inventory import CATEGORY as INVENTORY_CATEGORY
from benchguard.detection.inventory import filter_rules_for_prompt
from benchguard.detection.material import CATEGORY as MATERIAL_CATEGORY
from benchguard.detection.material import fingerprint_rules, for_prompt, read_material_bounded
from benchguard.detection.models import Rule


@dataclass(frozen=True)
class HarnessKnowledge:
    """Per batch: the protected material's fingerprints and the protected set's paths.

    ``home`` and ``home_seen_as``: where the home is read and how the agent names it.
    """

    home: Path
    home_seen_as: str
    fingerprints: tuple[Rule, ...]
    protected_paths: tuple[str, ...]
    protected_complete: bool
    material_files: int
    # False when the material reading stopped at its bounds (fewer fingerprints).
    material_complete: bool = True
    # The fingerprints kept for a given text (prompt and answers), by that text: a
    # batch repeats its prompts, and cutting the windows a prompt contains is not free.
    _cuts: dict[str, tuple[Rule, ...]] = field(default_factory=dict, compare=False, repr=False)

    def fingerprints_for(self, given: str) -> tuple[Rule, ...]:
        """The fingerprints less every window ``given`` contains (``material.for_prompt``)."""
        found = self._cuts.get(given)
        if found is None:
            if len(self._cuts) >= _MAX_CUTS:
                self._cuts.clear()
            found = self._cuts[given] = for_prompt(self.fingerprints, given)
        return found


_MAX_CUTS = 256


def gather(
    *,
    home: Path,
    material: Sequence[Path],
    known_roots: Sequence[Path] = (),
    exclude: Sequence[Path] = (),
    home_seen_as: str | None = None,
    material_seen_as: Mapping[str, str] | None = None,
) -> HarnessKnowledge:
    """Read the protected ``material`` (files or trees; ``exclude`` trees left out, such
    as a task's workspace seed, which the agent is given) into fingerprints, and list
    ``known_roots`` (plus the material) as the agent would address them.

    Bounded by ``material``'s caps (files, bytes per file) and the context's
    (:data:`~benchguard.detection.context.MAX_KNOWN_PATHS`).
    """
    seen_home = home_seen_as or str(home)
    files, material_complete = read_material_bounded(
        list(material), seen_as=material_seen_as, exclude=exclude
    )
    paths, complete = list_known_paths(
        [*known_roots, *material], seen_as={str(home): seen_home} if home_seen_as else None
    )
    return HarnessKnowledge(
        home=home,
        home_seen_as=seen_home,
        fingerprints=fingerprint_rules(files),
        protected_paths=paths,
        protected_complete=complete,
        material_files=len(files),
        material_complete=material_complete,
    )


def run_context(
    knowledge: HarnessKnowledge,
    *,
    workdir: str | None,
    record: Mapping[str, Any] | None = None,
    inventory: Sequence[Rule] = (),
) -> ScanContext:
    """The scan context one run's record stores.

    Before the run (no ``record``): the home and the working directory. After it: also
    the known paths the record's globs resolve to, among the protected set's paths and
    the home's entries as the pre-run ``inventory`` listed them (leftovers included).
    """
    if record is None:
        return ScanContext(home=knowledge.home_seen_as, workdir=workdir)
    home = knowledge.home_seen_as.rstrip("/")
    entries = [
        source if source.startswith("/") else f"{home}/{source}"
        for source in sorted({rule.source for rule in inventory if rule.source})
    ]
    used = paths_globs_use(
        record,
        home=knowledge.home_seen_as,
        workdir=workdir,
        known_paths=[*knowledge.protected_paths, home, *entries],
    )
    return ScanContext(
        home=knowledge.home_seen_as,
        workdir=workdir,
        known_paths=used,
        known_paths_complete=knowledge.protected_complete,
    )


def run_rules(
    knowledge: HarnessKnowledge | None,
    inventory: Sequence[Rule],
    *,
    prompt: str,
    answers: Sequence[str] = (),
    own: Sequence[str] = (),
) -> tuple[Rule, ...]:
    """The dynamic rules one run is scanned with (see the module doc).

    ``own``: the run's own task files as the material names them; when none of them
    keeps a fingerprint, the run gets no material fingerprints at all, so the profile's
    key-shaped fallback rules (which the detector skips beside fingerprints) still
    cover its own task file. The detector keys its compiled plan by the rules' digest,
    so runs whose rules are equal share it.
    """
    # A leftover's line the prompt quotes is the prompt's text, not the leftover's.
    authorized = filter_rules_for_prompt(inventory, prompt)
    rules = for_prompt(authorized, prompt, categories=(INVENTORY_CATEGORY,))
    if knowledge is None or not knowledge.fingerprints:
        return rules
    given = "\n".join([prompt, *(answer for answer in answers if answer)])
    fingerprints = knowledge.fingerprints_for(given)
    own_ids = {f"{MATERIAL_CATEGORY}/{path}/content" for path in own}
    if own_ids and not any(rule.id in own_ids for rule in fingerprints):
        # Nothing of the task's own definition is left to fingerprint (all of it is in
        # the prompt, or too short): without fingerprints the key-shaped fallback rules
        # stay on for this run, so a read of its own task file that never names the path
        # (`find ... -exec cat {} +`) is still seen; other tasks' fingerprints give way.
        return rules
    return (*rules, *fingerprints)


__all__ = ["HarnessKnowledge", "gather", "run_context", "run_rules"]
