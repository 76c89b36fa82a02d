"""The bounds the edge parser enforces on every record, whatever its source.

One named constant per bound, with the reason it is what it is. The harness's
transcript reader and the importers read the same constants, so a record is cut the
same way however it arrived.
"""

from __future__ import annotations

# Deep enough for any real tool call; shallow enough that every later reader (the
# detector's surfaces, json.dumps with indent) stays far from Python's recursion limit.
MAX_DEPTH = 48
# Steps kept per record: the first MAX_HEAD_STEPS and the last MAX_TAIL_STEPS. Keeping
# the tail means a read at the very end of a padded transcript is still scanned.
MAX_HEAD_STEPS = 15_000
MAX_TAIL_STEPS = 5_000
MAX_STEPS = MAX_HEAD_STEPS + MAX_TAIL_STEPS
# Text bytes kept in steps, head and tail: the transcript reader's own byte bound.
MAX_HEAD_STEP_BYTES = 12 << 20
MAX_TAIL_STEP_BYTES = 4 << 20
MAX_TRAJECTORY_BYTES = MAX_HEAD_STEP_BYTES + MAX_TAIL_STEP_BYTES
# A final output (one detector surface) longer than this keeps its head and tail.
MAX_OUTPUT_CHARS = 7 << 20
# Any other field (the prompt, a report, a foreign record's own keys) past this many
# characters of text is kept as cut text: with the step and output caps, this bounds
# the bytes of a record.
MAX_FIELD_CHARS = 4 << 20
# Leaf text kept from a value nested past MAX_DEPTH.
MAX_FLATTENED_CHARS = 64 << 10
# Notes kept per record about what the parser replaced (the rest are counted).
MAX_NOTES = 20
# What replaces text that is not valid Unicode (a lone surrogate, invalid UTF-8).
REPLACEMENT = "\ufffd"
# The marks a bound leaves in the text it cut, so a reader sees that it was cut.
DEPTH_MARK = "[benchguard: nested deeper than {depth} levels, flattened] "
CUT_MARK = "\n[... cut by the harness ...]\n"
