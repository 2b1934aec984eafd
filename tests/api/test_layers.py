"""The layers hold: the base (messaging_project.api) imports no app, accounts imports none
of the apps built on it, contacts and canned replies import neither each other nor
sending. The rule is import-linter's contract in pyproject.toml; `make lint` runs it too.
"""

import tomllib
from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"


def lint(config: Path, monkeypatch) -> int:
    monkeypatch.chdir(ROOT)
    return lint_imports(config_filename=str(config), no_cache=True, no_logo=True)


def test_no_module_imports_a_layer_above_its_own(monkeypatch):
    assert lint(PYPROJECT, monkeypatch) == 0


def test_the_contract_breaks_on_the_upward_imports_it_lists_as_ignored(tmp_path, monkeypatch):
    """The same contract without its ignore list finds accounts' admin importing sending,
    so it reads the real imports and a new upward import would fail the build."""
    options = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    (contract,) = options["contracts"]
    lines = ["[importlinter]", "root_packages =", *(f"    {p}" for p in options["root_packages"])]
    lines += ["[importlinter:contract:layers]", f"name = {contract['name']}", "type = layers"]
    lines += ["layers =", *(f"    {layer}" for layer in contract["layers"])]
    config = tmp_path / "importlinter.ini"
    config.write_text("\n".join(lines) + "\n")
    assert lint(config, monkeypatch) == 1
