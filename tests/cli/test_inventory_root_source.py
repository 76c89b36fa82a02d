"""An inventory root that is the agent home is refused, naming where it was configured."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchguard.harness.integrity import (
    INVENTORY_ROOT_FLAG,
    INVENTORY_ROOTS_ENV,
    IntegrityConfigError,
    check_roots_against_home,
    resolve_inventory_roots,
)
from cli.helpers import invoke, noop_run


@pytest.mark.parametrize("command", ["inventory", "run"])
@pytest.mark.parametrize("use_env", [False, True], ids=["flag", "environment"])
def test_the_home_as_a_root_names_its_source(tmp_path: Path, command: str, use_env: bool) -> None:
    """Guards against the error blaming ``--inventory-root`` when the operator never
    passed it (the root came from BENCHGUARD_INVENTORY_ROOTS): they would look for a
    flag that is not there."""
    home = tmp_path / "home"
    home.mkdir()
    args = [] if use_env else ["--inventory-root", str(home)]
    env = {INVENTORY_ROOTS_ENV: str(home)} if use_env else {}
    if command == "inventory":
        argv = ["inventory", str(home), *args]
    else:
        argv = noop_run(home, tmp_path / "results", *args)
    result = invoke(*argv, env=env)
    assert result.exit_code == 2, result.output
    message = result.stderr.replace("\n", "")
    source = INVENTORY_ROOTS_ENV if use_env else INVENTORY_ROOT_FLAG
    other = INVENTORY_ROOT_FLAG if use_env else INVENTORY_ROOTS_ENV
    assert f"{source} {home}: is the agent home itself" in message
    assert other not in message
    assert "Traceback" not in result.output


def test_flags_win_over_the_environment_and_name_themselves(tmp_path: Path) -> None:
    """Guards against a mixed configuration naming the source that was not used."""
    home, other = tmp_path / "home", tmp_path / "other"
    home.mkdir()
    other.mkdir()
    roots = resolve_inventory_roots({INVENTORY_ROOTS_ENV: str(other)}, [home])
    assert tuple(roots) == (home,)
    with pytest.raises(IntegrityConfigError, match=f"^{INVENTORY_ROOT_FLAG} "):
        check_roots_against_home(roots, home)
    from_env = resolve_inventory_roots({INVENTORY_ROOTS_ENV: str(home)}, None)
    with pytest.raises(IntegrityConfigError, match=f"^{INVENTORY_ROOTS_ENV} "):
        check_roots_against_home(from_env, home)
