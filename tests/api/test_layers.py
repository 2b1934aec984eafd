"""The layers hold: the base (messaging_project.api) imports no app, accounts imports none
of the apps built on it, contacts and canned replies import neither each other nor
sending. The rule is import-linter's contract in pyproject.toml; `make lint` runs it too.
"""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
# The command `make lint` runs. In its own process: in-process, it would reconfigure
# logging (disabling the loggers other tests read) and prepend to sys.path.
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint(config: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LINT_IMPORTS, "--config", config, "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_no_module_imports_a_layer_above_its_own():
    result = lint(PYPROJECT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_contract_breaks_on_exactly_the_upward_imports_it_lists_as_ignored(tmp_path):
    """The same contract without its ignore list reports each import listed as ignored,
    and no other: it reads the real imports, so a new upward import would fail the build.
    None of them is accounts': the channel settings moved to sending with their admin."""
    options = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    (contract,) = options["contracts"]
    ignored = set(contract.get("ignore_imports", []))
    lines = ["[importlinter]", "root_packages =", *(f"    {p}" for p in options["root_packages"])]
    lines += ["[importlinter:contract:layers]", f"name = {contract['name']}", "type = layers"]
    lines += ["layers =", *(f"    {layer}" for layer in contract["layers"])]
    config = tmp_path / "importlinter.ini"
    config.write_text("\n".join(lines) + "\n")
    result = lint(config)
    reported = set(re.findall(r"^- (\S+ -> \S+) \(l\.\d+\)$", result.stdout, re.MULTILINE))
    assert reported == ignored, result.stdout + result.stderr
    assert result.returncode == (1 if ignored else 0), result.stdout + result.stderr
    assert not [line for line in reported if line.startswith("accounts.")]
