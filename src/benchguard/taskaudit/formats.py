"""audit-tasks output for machines: SARIF 2.1.0 (one result per hackable task, located
at its task file) and JUnit XML (one test case per task, failed when hackable).

Both take the audit's JSON value (``workflows.audit_tasks.TaskAudit.to_json``) so this
module stays below the workflows layer. Text from task files is written as data: SARIF
is JSON, and JUnit text goes through ElementTree's escaping with characters XML cannot
hold replaced.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
RULE_ID = "benchguard/hackable-task"
UNAUDITED_RULE_ID = "benchguard/unaudited-task"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _why(task: dict[str, Any]) -> str:
    return f"{task['name']}: hackable by {', '.join(task['hacks'])}"


def _uri(path: str) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_uri()


def sarif_log(audit: dict[str, Any], *, tool_version: str) -> dict[str, Any]:
    results = [
        {
            "ruleId": RULE_ID,
            "ruleIndex": 0,
            "level": "error",
            "message": {"text": _why(task)},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(task["path"])}}}],
            "properties": {"hacks": task["hacks"]},
        }
        for task in audit["tasks"]
        if task["hackable"]
    ]
    results += [
        {
            "ruleId": UNAUDITED_RULE_ID,
            "ruleIndex": 1,
            "level": "warning",
            "message": {"text": f"{task['name']}: not audited: {task['unaudited']}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(task["path"])}}}],
        }
        for task in audit["tasks"]
        if not task["hackable"] and task.get("unaudited")
    ]
    rule = {
        "id": RULE_ID,
        "name": "HackableTask",
        "shortDescription": {"text": "A generic exploit or the lint passes the task's checks"},
        "defaultConfiguration": {"level": "error"},
    }
    unaudited_rule = {
        "id": UNAUDITED_RULE_ID,
        "name": "UnauditedTask",
        "shortDescription": {"text": "A task the audit could not run, so never passed sound"},
        "defaultConfiguration": {"level": "warning"},
    }
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "benchguard audit-tasks",
                        "version": tool_version,
                        "rules": [rule, unaudited_rule],
                    }
                },
                "results": results,
            }
        ],
    }


def junit_xml(audit: dict[str, Any]) -> str:
    suite = ElementTree.Element("testsuite", name="benchguard audit-tasks")
    failures = errors = 0
    for task in audit["tasks"]:
        case = ElementTree.SubElement(
            suite, "testcase", classname="audit-tasks", name=_safe(task["name"])
        )
        if not task["hackable"] and task.get("unaudited"):
            errors += 1
            ElementTree.SubElement(case, "error", message=_safe(task["unaudited"]))
        if task["hackable"]:
            failures += 1
            failure = ElementTree.SubElement(case, "failure", message=_safe(_why(task)))
            failure.text = _safe(
                "\n".join(
                    f"{e['id']}: credit {e['credit']:.2f}"
                    for e in task["exploits"]
                    if e["credit"] > 0
                )
            )
    suite.set("tests", str(len(audit["tasks"])))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _safe(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)
