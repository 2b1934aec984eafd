"""`make loadtest` in miniature, so CI runs the load test and its consistency check."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # gunicorn and a scratch database

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_load_test_ends_consistent():
    # A subprocess: the load test sets up Django on its own scratch database.
    result = subprocess.run(
        [sys.executable, "loadtest/run.py", "--requests", "150", "--threads", "4"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    verdicts = [line for line in result.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert len(verdicts) == 7
    assert all(line.startswith("PASS") for line in verdicts), verdicts
    assert "total                         150" in result.stdout
