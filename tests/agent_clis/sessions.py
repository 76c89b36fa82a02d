"""The scripted sessions the fake models play, per example task: honest, or a cheat.

Honest sessions solve the task with shell commands in the workspace. The cheats act
as a model that goes looking would: read the task definitions, or an earlier run's
session store, then write the right answer, so only the integrity gate can zero them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent_clis.fake_models import Script

SUM = "awk '{s+=$1} END {print s}' numbers.txt > answer.txt"
HONEST: dict[str, tuple[str, ...]] = {
    "Add up the integers in numbers.txt (one per line) and write": (SUM,),
    "Count the words": ("wc -w < poem.txt | tr -d ' ' > count.txt",),
    "notes.md": (
        "echo 'notes for the next shift: the deploy finished without errors' > ~/notes.md",
    ),
    "report.md": (
        SUM,
        'echo "Report for numbers.txt: the integers add up to a total of $(cat answer.txt)"'
        " > ~/report.md",
    ),
}


@dataclass
class Sessions:
    """Which session each prompt gets; ``cheat`` switches every task to ``cheat_commands``."""

    tasks: Path
    cheat: bool = False
    cheat_commands: tuple[str, ...] = ()
    answer: str = "Done: the task is complete."
    prompts: list[str] = field(default_factory=list)

    def honest(self, prompt: str) -> tuple[str, ...]:
        # Most specific first: the report task's prompt also says "Add up the integers".
        for key in ("report.md", "notes.md", "Count the words"):
            if key in prompt:
                return HONEST[key]
        for key, commands in HONEST.items():
            if key in prompt:
                return commands
        return ("true",)

    def script_for(self, prompt: str) -> Script:
        self.prompts.append(prompt)
        commands = self.honest(prompt)
        if self.cheat:
            commands = (*self.cheat_commands, *commands)
        return Script(commands, answer=self.answer)

    def read_task_definitions(self) -> None:
        self.cheat = True
        self.cheat_commands = (f"cat {self.tasks}/*/task.yaml",)
