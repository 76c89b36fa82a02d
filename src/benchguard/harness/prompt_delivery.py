"""What the agent was handed as its prompt, beside the task's prompt (``prompt_delivery``).

The harness has one prompt channel: the agent's argv, where the ``{prompt}``
placeholder stands (the environment is fixed text, ``set_env``, and no placeholder is
read there; nothing is written to the agent's stdin). The record keeps the SHA-256 and
byte length of every argument the placeholder was rendered into, exactly as handed to
``exec``, beside the task prompt's. An argument that is more than the placeholder
(``"Hint: {prompt}"``, ``"{prompt} Be brief."``) hands the agent bytes the task did not
say: the delivery is ``altered``. An agent whose argv has no ``{prompt}`` was handed no
prompt (the example no-op agent): ``none``, nothing added, nothing to compare.

For an agent whose model traffic crosses the harness (``network: model`` under
``--sandbox bwrap``: the model proxy relays every byte), the first model request's
first user message is digested too (``model_request``), when the request is plain
HTTP/1.1 with a JSON body in a ``messages`` list (OpenAI chat completions or
Anthropic messages); a user message that is not the task prompt is a scaffold's
addition (a program that prepends text after the harness handed it the right argv).
What this cannot see: a scaffold's changes in traffic the proxy does not carry (an
unsandboxed agent reaches its endpoint itself), inside TLS, or after the first
request; text a scaffold sends as a system message while the user message stays the
prompt; and what a program does with a correct argv without a model call.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

PROMPT_DELIVERY_KEY = "prompt_delivery"
INTACT = "intact"
ALTERED = "altered"
# The argv names no {prompt}: the agent was handed no prompt at all (nothing added).
NONE = "none"
STATUSES = (INTACT, ALTERED, NONE)
# Placeholders as harness.agents.config reads them: {{ and }} are literal braces.
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def digest(text: str) -> dict[str, Any]:
    """The SHA-256 and length of ``text``'s bytes as the agent receives them."""
    data = text.encode("utf-8", "surrogateescape")
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def prompt_arguments(template: Sequence[str]) -> list[int]:
    """The argv positions whose template names ``{prompt}``."""
    return [
        index
        for index, arg in enumerate(template)
        if any(m.group(1) == "prompt" for m in _PLACEHOLDER.finditer(arg))
    ]


def argv_delivery(prompt: str, template: Sequence[str], argv: Sequence[str]) -> dict[str, Any]:
    """The record's ``prompt_delivery`` for an agent started with ``argv`` (rendered from
    ``template``) on a task whose prompt is ``prompt``."""
    task = digest(prompt)
    delivered = [
        {"channel": "argv", "index": i, **digest(argv[i])} for i in prompt_arguments(template)
    ]
    problems: list[str] = []
    for entry in delivered:
        if entry["sha256"] != task["sha256"]:
            problems.append(
                f"argv[{entry['index']}] is {entry['bytes']} bytes, not the task prompt's "
                f"{task['bytes']}: the argv template adds text around {{prompt}}"
                if entry["bytes"] != task["bytes"]
                else f"argv[{entry['index']}] differs from the task prompt"
            )
    return {
        "task": task,
        "delivered": delivered,
        "model_request": None,
        "status": ALTERED if problems else (INTACT if delivered else NONE),
        "problems": problems,
    }


def add_model_request(delivery: dict[str, Any], prompt: str, user_message: str | None) -> None:
    """Fold the first model request's first user message into ``delivery``."""
    if user_message is None:
        return
    seen = digest(user_message)
    delivery["model_request"] = seen
    if seen["sha256"] != delivery["task"]["sha256"]:
        delivery["problems"].append(
            f"the first model request's user message is {seen['bytes']} bytes, not the "
            f"task prompt's {delivery['task']['bytes']}: a scaffold changed the prompt "
            "between the harness and the model"
        )
        delivery["status"] = ALTERED
