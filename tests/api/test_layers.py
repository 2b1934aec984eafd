"""The layers hold: core < worker < api import no app, accounts imports none of the apps
built on it, contacts and canned replies import neither each other nor sending. The rule
is import-linter's contract in pyproject.toml; `make lint` runs it too.
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


def test_the_contract_reads_the_real_imports(tmp_path):
    """The same contract with sending and inbound swapped reports inbound's imports of
    sending, and nothing else: it reads the code, so a new upward import fails the build."""
    options = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    (contract,) = options["contracts"]
    layers = list(contract["layers"])
    top, below = layers.index("inbound"), layers.index("sending")
    layers[top], layers[below] = layers[below], layers[top]
    lines = ["[importlinter]", "root_packages =", *(f"    {p}" for p in options["root_packages"])]
    lines += ["[importlinter:contract:layers]", f"name = {contract['name']}", "type = layers"]
    lines += ["layers =", *(f"    {layer}" for layer in layers)]
    config = tmp_path / "importlinter.ini"
    config.write_text("\n".join(lines) + "\n")
    result = lint(config)
    reported = re.findall(r"^- (\S+) -> (\S+) \(l\.\d+\)$", result.stdout, re.MULTILINE)
    assert result.returncode == 1, result.stdout + result.stderr
    assert reported, result.stdout
    assert all(a.startswith("inbound.") and b.startswith("sending.") for a, b in reported)
