"""benchguard inside the tools evaluators already use: Inspect (a scorer, hooks and a
Scout scanner, registered through the ``inspect_ai`` entry-point group) and verifiers
(an integrity reward function). Each hands a run to :mod:`benchguard.integrations.verdict`."""
