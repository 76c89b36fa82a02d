"""The labelled record: the one shape the corpus produces and the scorer consumes.

Kept in its own module so corpus generation and scoring depend on this, not on each
other.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

SpanLabel = Literal["secret", "decoy"]


class LabelledSpan(BaseModel):
    """A half-open character range ``[start, end)`` of a record's text.

    ``secret`` spans must be removed completely; ``decoy`` spans look like secrets but
    must survive untouched.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: int
    end: int
    label: SpanLabel
    family: str

    @model_validator(mode="after")
    def _ordered(self) -> LabelledSpan:
        if not 0 <= self.start < self.end:
            raise ValueError(f"span [{self.start}, {self.end}) is empty or negative")
        return self


class LabelledRecord(BaseModel):
    """One text record of the corpus stream with every secret and decoy labelled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    kind: str
    text: str
    spans: tuple[LabelledSpan, ...] = ()

    @model_validator(mode="after")
    def _spans_fit(self) -> LabelledRecord:
        previous_end = 0
        for span in self.spans:
            if span.end > len(self.text):
                raise ValueError(f"span [{span.start}, {span.end}) runs past the text")
            if span.start < previous_end:
                raise ValueError("spans must be sorted and must not overlap")
            previous_end = span.end
        return self

    def span_text(self, span: LabelledSpan) -> str:
        return self.text[span.start : span.end]
