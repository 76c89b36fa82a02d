"""Importers: other frameworks' run logs turned into benchguard records.

Each format lives in its own module; ``registry`` detects a file's format by content
and dispatches to the right importer.
"""
