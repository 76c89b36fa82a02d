"""The launcher's seccomp filter closes the extended-attribute channel between runs.

Landlock (ABI 7) does not mediate ``setxattr``/``getxattr``, and an unsandboxed root
agent (uid 0, no capability) owns every root-owned file: red team 3 stored one run's
answer in a ``user.*`` attribute of a host file and every later run answered from it.
The standard-library adversary (tests/harness/adversaries/xattr_channel.py) reads the
channel first and answers from it when it holds anything; the test seeds the channel
with a wrong answer, as an earlier run would have, so a readable channel scores 0.
Checked: with the launcher's filter off (``Policy.seccomp`` False) every test here
fails (the channel is read, written and removed; the raw, 32-bit and io_uring routes
answer as the kernel does without the filter).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from benchguard.harness import seccomp
from benchguard.harness.confine import launcher_script
from harness.helpers import only_tasks
from harness.privileges import Harness, records, run_adversary

SANDBOXES = ("none", "bwrap")
NAME = "user.bg.answer"
EOPNOTSUPP = "denied OSError 95"


def _channel(harness: Harness) -> Path:
    """A host file outside every run's allow-list, owned by the harness's uid, holding a
    wrong answer an earlier run left."""
    channel = harness.operator.root / "channel"
    channel.write_text("a host file\n", "utf-8")
    os.setxattr(channel, NAME, b"999")
    if harness.identity == "user":
        os.chown(channel, 65534, 65534)
    return channel


def _outcomes(record: dict[str, Any]) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(record["output"].strip().splitlines()[-1])
    return loaded


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_xattr_channel_between_runs(harness: Harness, sandbox: str) -> None:
    """Guards against the channel as root and unprivileged, sandboxed and not: the
    agent cannot read the earlier run's answer, store its own, or reach the family by
    a raw syscall, a 32-bit ``int 0x80``, the x32 bit or an io_uring ring."""
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    channel = _channel(harness)
    tasks = only_tasks(harness.operator, "sum-numbers")
    args = ("--sandbox", "bwrap") if sandbox == "bwrap" else ()
    env = {"ATTACK_CHANNEL": str(channel)}
    run_dir = run_adversary(harness, "xattr_channel.py", tasks, *args, env=env)
    [record] = records(run_dir)
    assert record["status"] == "success", record["error"]
    assert record["seccomp"]["filter"] == seccomp.FILTER_NAME
    assert "setxattr" in record["seccomp"]["denied"]
    outcomes = _outcomes(record)
    assert outcomes["answer"] == "worked"
    if sandbox == "none":
        # The file is in view (Landlock does not hide it): the filter refuses.
        assert outcomes["get-channel"] == EOPNOTSUPP
    for label in ("set-own", "get-own", "raw-setxattr", "x32-getxattr", "i386-getxattr"):
        assert outcomes[label] == EOPNOTSUPP, (label, outcomes)
    assert outcomes["io_uring"] == "denied OSError 38"
    assert record["scores"]["OutcomeScore"]["score"] == 1.0
    assert os.getxattr(channel, NAME) == b"999"


@pytest.mark.slow
def test_no_channel_at_j2(harness: Harness) -> None:
    """Two concurrent runs of one batch cannot use the channel to each other."""
    channel = _channel(harness)
    os.removexattr(channel, NAME)
    tasks = only_tasks(harness.operator, "sum-numbers")
    env = {"ATTACK_CHANNEL": str(channel)}
    run_dir = run_adversary(
        harness, "xattr_channel.py", tasks, "--iterations", "2", "-j", "2", env=env
    )
    found = records(run_dir)
    assert len(found) == 2
    for record in found:
        outcomes = _outcomes(record)
        assert outcomes["set-channel"] == EOPNOTSUPP
        assert outcomes["answer"] == "worked"
    assert os.listxattr(channel) == []


def _wheel(directory: Path) -> Path:
    """A minimal real wheel (pure Python) for pip to install under the filter."""
    wheel = directory / "bgtiny-1.0-py3-none-any.whl"
    files = {
        "bgtiny/__init__.py": "VALUE = 7\n",
        "bgtiny-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: bgtiny\nVersion: 1.0\n",
        "bgtiny-1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{name},,\n" for name in files) + "bgtiny-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr("bgtiny-1.0.dist-info/RECORD", record)
    return wheel


def test_honest_tools_work_under_the_filter(tmp_path: Path) -> None:
    """``cp -a``, ``tar --xattrs``, ``shutil.copy2``/``copytree``, ``ls -l``, git and
    ``pip install`` treat the refused calls as a filesystem without attributes and
    succeed, run through the real launcher (filter on, no Landlock)."""
    source = tmp_path / "src"
    (source / "sub").mkdir(parents=True)
    (source / "sub" / "f.txt").write_text("data\n", "utf-8")
    os.setxattr(source / "sub" / "f.txt", NAME, b"1")
    wheel = _wheel(tmp_path)
    script = (
        "set -e; cp -a src copy; test -f copy/sub/f.txt; "
        "tar --xattrs -cf t.tar src; mkdir x; tar --xattrs -xf t.tar -C x; "
        f'{sys.executable} -c \'import shutil; shutil.copy2("src/sub/f.txt", "c2"); '
        'shutil.copytree("src", "tree")\'; ls -l copy/sub > /dev/null; '
        "git init -q repo; cd repo; cp ../src/sub/f.txt .; git add f.txt; "
        "git -c user.name=t -c user.email=t@t commit -qm one; cd ..; "
        f"{sys.executable} -m pip install -q --no-index --no-deps --target site {wheel}; "
        "test -f site/bgtiny/__init__.py; grep Seccomp: /proc/self/status"
    )
    policy = ["confine=0", "seccomp=1"]
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(launcher_script()), *policy, "--", "sh", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Seccomp:", "2"], done.stdout
    # The filter was really on: the copy carries no attribute.
    assert os.listxattr(tmp_path / "copy" / "sub" / "f.txt") == []
