"""``benchguard-agent``: a minimal tool-calling agent for any OpenAI-compatible endpoint.

It sends the task prompt to ``POST {base_url}/chat/completions`` with two tools, runs
the calls the model makes inside the workspace, and repeats until the model answers
without a tool call. The answer goes to stdout; every tool call is appended to the
file named by ``BENCHGUARD_TRAJECTORY`` as one ``{name, args, result, status}`` line.

Tools:

- ``shell(command)``: ``/bin/sh -c command`` in the workspace (bounded time and output);
- ``read_file(path)``: a file's text, the path taken relative to the workspace.

This file is deliberately standard-library only and runnable as a plain script
(``python openai_agent.py ...``): under ``--sandbox bwrap`` the harness binds this one
file into the sandbox, not the package it lives in.

Configuration: ``--base-url`` (or ``OPENAI_BASE_URL``), ``--model`` (or ``OPENAI_MODEL``),
and the API key read from the variable named by ``--api-key-env`` (default
``OPENAI_API_KEY``; local servers usually need none).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
DEFAULT_MAX_STEPS = 30
SHELL_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 300.0
# Tool output handed back to the model (and recorded) is capped: a `cat` of a huge file
# must not blow the context window or the transcript.
MAX_TOOL_OUTPUT_CHARS = 64 * 1024

SYSTEM_PROMPT = (
    "You are an agent working in a shell workspace. Use the shell and read_file tools to "
    "complete the task, then reply with your final answer and no tool call."
)
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "shell",
            "description": "Run a shell command in the workspace; returns output and exit code.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file; relative paths are taken from the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
]


class EndpointError(RuntimeError):
    """The chat-completions endpoint failed or answered in an unexpected shape."""


def _clip(text: str) -> str:
    if len(text) <= MAX_TOOL_OUTPUT_CHARS:
        return text
    return text[:MAX_TOOL_OUTPUT_CHARS] + f"\n[... {len(text) - MAX_TOOL_OUTPUT_CHARS} chars cut]"


# Never handed to the shell the model drives: the transcript channel, the harness's own
# variables and the endpoint's credentials.
_PRIVATE_PREFIXES = ("BENCHGUARD_", "OPENAI_")


def shell_environment(parent: dict[str, str], private: tuple[str, ...] = ()) -> dict[str, str]:
    """``parent`` without the harness's variables, the endpoint settings and ``private``
    (the API key variable the agent was told to read)."""
    return {
        name: value
        for name, value in parent.items()
        if not name.startswith(_PRIVATE_PREFIXES) and name not in private
    }


def run_shell(
    command: str, workspace: Path, env: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """(result text, status) of one shell call, in ``env`` (what :func:`main` made once
    the key and channel were read: the shell sees only this); without one, this
    process's environment less every private name (:func:`shell_environment`)."""
    env = dict(env) if env is not None else shell_environment(dict(os.environ))
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=SHELL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"timed out after {SHELL_TIMEOUT_S:g}s", "error"
    except OSError as exc:
        return f"could not run: {exc}", "error"
    text = (done.stdout + done.stderr).decode("utf-8", errors="replace")
    return _clip(
        f"{text}\n[exit code {done.returncode}]"
    ), "completed" if done.returncode == 0 else "error"


def read_text(path: str, workspace: Path) -> tuple[str, str]:
    target = Path(path).expanduser()
    if not target.is_absolute():
        target = workspace / target
    try:
        with target.open("rb") as handle:
            data = handle.read(MAX_TOOL_OUTPUT_CHARS + 1)
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}", "error"
    return _clip(data.decode("utf-8", errors="replace")), "completed"


def call_tool(
    name: str, raw_arguments: str, workspace: Path, shell_env: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], str, str]:
    """(recorded args, result, status) for one tool call the model made; a shell call
    runs in ``shell_env`` (see :func:`run_shell`)."""
    try:
        args = json.loads(raw_arguments or "{}")
    except json.JSONDecodeError:
        return {"raw": raw_arguments}, "arguments are not valid JSON", "error"
    if not isinstance(args, dict):
        return {"raw": raw_arguments}, "arguments must be a JSON object", "error"
    if name == "shell" and isinstance(args.get("command"), str):
        return args, *run_shell(args["command"], workspace, shell_env)
    if name == "read_file" and isinstance(args.get("path"), str):
        return args, *read_text(args["path"], workspace)
    return args, f"unknown tool {name!r} or missing argument", "error"


class Transcript:
    """Appends protocol lines, one write per line, so a killed run keeps what it did.

    The channel is opened once, close-on-exec: the shell the model drives neither
    inherits it nor learns its name (it is not in the shell's environment).
    """

    def __init__(self, path: str | None) -> None:
        self._fd: int | None = None
        if path:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            self._fd = os.open(path, flags, 0o600)

    def record(self, name: str, args: dict[str, Any], result: str, status: str) -> None:
        if self._fd is None:
            return
        line = json.dumps({"name": name, "args": args, "result": result, "status": status})
        data = (line + "\n").encode("utf-8")
        while data:
            data = data[os.write(self._fd, data) :]


def chat(base_url: str, api_key: str | None, payload: dict[str, Any]) -> dict[str, Any]:
    url = base_url.rstrip("/") + "/chat/completions"
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
            body = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        detail = exc.read(2000).decode("utf-8", errors="replace")
        raise EndpointError(f"{url}: HTTP {exc.code}: {detail}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise EndpointError(f"{url}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise EndpointError(f"{url}: response is not JSON ({exc.msg})") from None
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("choices"), list)
        or not body["choices"]
    ):
        raise EndpointError(f"{url}: response has no choices")
    message = body["choices"][0].get("message")
    if not isinstance(message, dict):
        raise EndpointError(f"{url}: choices[0] has no message")
    return message


def run_agent(
    *,
    prompt: str,
    workspace: Path,
    base_url: str,
    model: str,
    api_key: str | None,
    max_steps: int,
    transcript: Transcript,
    shell_env: Mapping[str, str] | None = None,
) -> str:
    """Drive the model to a final answer; raise ``EndpointError`` if it never gives one.
    Shell calls run in ``shell_env`` (see :func:`run_shell`)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": prompt},
    ]
    for _ in range(max_steps):
        message = chat(base_url, api_key, {"model": model, "messages": messages, "tools": TOOLS})
        calls = message.get("tool_calls") or []
        messages.append(
            {"role": "assistant", "content": message.get("content") or "", "tool_calls": calls}
            if calls
            else {"role": "assistant", "content": message.get("content") or ""}
        )
        if not calls:
            return str(message.get("content") or "")
        for call in calls:
            function = call.get("function") or {}
            name = str(function.get("name") or "unknown")
            args, result, status = call_tool(
                name, str(function.get("arguments") or ""), workspace, shell_env
            )
            transcript.record(name, args, result, status)
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": result})
    raise EndpointError(f"no final answer after {max_steps} steps")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchguard-agent", description=__doc__.split("\n")[0])
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--workspace", default=".")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", DEFAULT_BASE_URL))
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", ""))
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY")
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS)
    parser.add_argument("--trajectory", default=os.environ.get("BENCHGUARD_TRAJECTORY"))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    if not options.model:
        print("benchguard-agent: no model: pass --model or set OPENAI_MODEL", file=sys.stderr)
        return 2
    api_key = os.environ.get(options.api_key_env) or None
    transcript = Transcript(options.trajectory)
    # Made once the key and channel are read; every shell call sees only this.
    shell_env = shell_environment(dict(os.environ), (options.api_key_env,))
    try:
        answer = run_agent(
            prompt=options.prompt,
            workspace=Path(options.workspace).resolve(),
            base_url=options.base_url,
            model=options.model,
            api_key=api_key,
            max_steps=max(1, options.max_steps),
            transcript=transcript,
            shell_env=shell_env,
        )
    except EndpointError as exc:
        print(f"benchguard-agent: {exc}", file=sys.stderr)
        return 1
    print(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
