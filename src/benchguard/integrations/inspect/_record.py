"""An Inspect sample or task state as our record, read the way the Inspect importer
reads a sample of a log (tool calls from the messages, else the tool events)."""

from __future__ import annotations

from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.solver import TaskState

from benchguard.importers.inspect_eval import sample_record


def state_record(state: TaskState, *, task: str = "inspect") -> dict[str, Any]:
    """The record of a task state (what ``inspect score`` hands a scorer)."""
    raw_input: Any = (
        state.input
        if isinstance(state.input, str)
        else [m.model_dump(mode="json") for m in state.input]
    )
    sample = {
        "id": state.sample_id,
        "epoch": state.epoch,
        "input": raw_input,
        "messages": [m.model_dump(mode="json") for m in state.messages],
        "output": {"completion": state.output.completion if state.output else ""},
    }
    return sample_record(
        sample, task=task, model=str(state.model), where=f"sample {state.sample_id}"
    )


def eval_sample_record(sample: EvalSample, *, task: str, model: str | None) -> dict[str, Any]:
    """The record of a finished sample (what a hook sees at ``on_sample_end``)."""
    dumped = sample.model_dump(mode="json", exclude={"attachments"})
    dumped["attachments"] = dict(sample.attachments or {})
    return sample_record(dumped, task=task, model=model, where=f"sample {sample.id}")
