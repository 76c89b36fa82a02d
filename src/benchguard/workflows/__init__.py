"""Workflows: what each command does, as functions that return what happened.

The CLI parses options, calls one workflow and prints its outcome; a workflow composes
the layers (importers, engines, rescore, rows, aggregate, leaderboard) and never prints.
Errors a person can act on are :class:`benchguard.errors.BenchguardError` subclasses;
each outcome carries the exit code it maps to.
"""

from __future__ import annotations
