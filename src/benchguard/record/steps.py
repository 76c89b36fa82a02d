"""One step of a trajectory: a tool call, in the reference's ``{name, args, result, status}``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# called: no result yet; completed; error: the tool failed.
StepStatus = Literal["called", "completed", "error"]
STEP_STATUSES: tuple[StepStatus, ...] = ("called", "completed", "error")


class Step(BaseModel):
    """One tool call: ``{name, args, result, status}``, the reference's step shape."""

    model_config = ConfigDict(extra="forbid")

    # The tool's name ("bash", "read_file", ...); "unknown" when the log had none.
    name: str
    # Its arguments, always an object (a bare string is kept as ``{"raw": ...}``).
    args: dict[str, Any] = Field(default_factory=dict)
    # What the tool returned, as text; None when the call never returned.
    result: str | None = None
    # called: no result yet; completed; error: the tool failed.
    status: StepStatus = "completed"
