"""The OpenAI-compatible judge against a local chat-completions server started here."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from benchguard.scoring import keys
from benchguard.scoring.judge import OpenAICompatibleJudge, judge_or_null
from benchguard.scoring.pipeline import score_records


class _ScriptedGrader(BaseHTTPRequestHandler):
    """Grades 0.9 unless the answer mentions 'wrong'; replies with junk for 'junk'."""

    seen: list[dict[str, Any]] = []  # noqa: RUF012 - shared log for the test

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        prompt = body["messages"][-1]["content"]
        if "junk" in prompt:
            content = "I cannot grade this."
        else:
            score = 0.1 if "wrong" in prompt else 0.9
            content = json.dumps({"score": score, "reason": "compared with the reference"})
        payload = json.dumps({
            "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def grader_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedGrader)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _record(output: str, report: dict[str, Any]) -> dict[str, Any]:
    return {"folder": "t", "iteration": 0, "input": "rotate logs", "output": output,
            "expected_output": "logs rotated", "scores": {}, "cheating_report": report}  # fmt: skip


@pytest.mark.slow
def test_judged_correctness_feeds_the_outcome_but_never_the_gate(grader_url: str) -> None:
    judge, why = judge_or_null(
        "openai",
        {"BENCHGUARD_JUDGE_API_KEY": "test-key", "BENCHGUARD_JUDGE_BASE_URL": grader_url,
         "BENCHGUARD_JUDGE_MODEL": "grader"},
    )  # fmt: skip
    assert why is None and isinstance(judge, OpenAICompatibleJudge)
    clean = {"status": "clean", "categories": [], "findings": []}
    flagged = {"status": "flagged", "categories": ["task-definition"], "findings": [{}]}
    records = [
        _record("logs rotated", clean),
        _record("logs rotated", flagged),
        _record("junk", clean),
        {**_record("", clean), "expected_output": None},
    ]
    errors = score_records(records, judge=judge)
    assert records[0]["scores"][keys.JUDGED_CORRECTNESS]["score"] == 0.9
    assert records[0]["scores"][keys.OUTCOME_SCORE]["score"] == 0.9
    assert records[1]["scores"][keys.OUTCOME_SCORE]["score"] == 0.0  # judged 0.9, still gated
    assert keys.OUTCOME_SCORE not in records[2]["scores"]  # unparseable grade: no composite
    assert len(errors) == 1 and "no JSON object" in errors[0]
    assert keys.JUDGED_CORRECTNESS not in records[3]["scores"]  # nothing to judge against
    assert len(_ScriptedGrader.seen) == 3 and _ScriptedGrader.seen[0]["model"] == "grader"
