"""The service as it was before a change, served beside today's in the same run, so that a
target written as "within 5% of today's" compares two trees on the same machine at the
same moment rather than against a figure from another day.

The baseline is an export of a commit (`git archive`, no worktree registered) sharing
this tree's .venv (each of its runtime dependencies pinned the same in this tree's
pyproject.toml), with its own database migrated by its own migrations, its own cache database
and its own stack. A clone that does not hold the commit (a shallow CI clone) has no
baseline: `missing_reason` says why, and the scenario reports the target as skipped.
"""

import contextlib
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

from bench.stack import ROOT, Stack, log, migrated_template

# The last merge before issue 28's code (the account's news): its inbound webhook is
# "today's" for that throughput target (the commit after it changes a test only).
BEFORE_ACCOUNT_NEWS = "3b1e0eca2d466d4755c233c1c7c916c02ada1d10"
# The baseline's cache: bench/stack.py's stacks use 11, the suite 14 and 15.
BASELINE_REDIS_URL = "redis://127.0.0.1:6379/12"


def missing_reason(commit: str) -> str:
    """Why `commit` cannot be served here; empty when it can."""
    found = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode:
        return f"commit {commit[:12]} is not in this clone (a shallow clone?)"
    # The baseline runs with this tree's .venv: each of its runtime dependencies must be
    # pinned the same here (one added since, such as openpyxl, sits unused beside it; the
    # tools of the test and lint extras do not run in it).
    then = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:pyproject.toml"],
        capture_output=True,
        text=True,
    )
    now = (ROOT / "pyproject.toml").read_text()
    if then.returncode or not set(runtime_dependencies(then.stdout)) <= set(
        runtime_dependencies(now)
    ):
        return f"the dependencies changed since {commit[:12]}: its .venv would not be this one"
    return ""


def runtime_dependencies(pyproject: str) -> list[str]:
    return tomllib.loads(pyproject)["project"]["dependencies"]


@contextlib.contextmanager
def exported(commit: str) -> Iterator[Path]:
    """`commit`'s files in a scratch folder, with this tree's .venv; removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="bench-baseline-"))
    try:
        archive = subprocess.Popen(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit], stdout=subprocess.PIPE
        )
        subprocess.run(["tar", "-x", "-C", str(folder)], stdin=archive.stdout, check=True)
        if archive.wait():
            raise RuntimeError(f"git archive {commit} failed")
        (folder / ".venv").symlink_to(ROOT / ".venv")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def baseline_stack(commit: str, *, seed: str) -> Iterator[Stack]:
    """A stack serving `commit` (seeded by `seed`, Python run by that tree's `manage.py
    shell`); ask `missing_reason` first."""
    with (
        exported(commit) as root,
        migrated_template(root) as template,
        Stack(template, seed=seed, root=root, redis_url=BASELINE_REDIS_URL) as stack,
    ):
        log(f"baseline {commit[:12]} served on {stack.base}")
        yield stack
