"""A one-task verifiers v1 taskset for producing a real vf-eval log offline."""

from __future__ import annotations

from collections.abc import Iterator

import verifiers.v1 as vf


class ProbeData(vf.TaskData):
    """One row: the prompt only."""


class ProbeTask(vf.Task[ProbeData]):
    @vf.reward(weight=1.0)
    async def answered(self, trace: vf.Trace) -> float:
        return 1.0 if "42" in (trace.last_reply or "") else 0.0


class ProbeConfig(vf.TasksetConfig):
    """No knobs."""


class ProbeTaskset(vf.Taskset[ProbeTask, ProbeConfig]):
    def load(self) -> Iterator[ProbeTask]:
        yield ProbeTask(
            ProbeData(
                id="fix-login",
                name="fix-login",
                prompt="Fix the login bug in app/login.py, then reply with the answer.",
            )
        )


__all__ = ["ProbeTaskset"]
