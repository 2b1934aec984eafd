"""The run's one report: bench/results/latest.json, its summary on the terminal, and the
markdown tables of docs/performance.md (`python -m bench.report` prints them from
latest.json)."""

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import psycopg

from bench.stack import ADMIN_URL, ROOT

RESULTS = ROOT / "bench" / "results"


def target(value: float, holds: bool, *, goal: str) -> dict:
    """One target: the measured value, whether it holds, and what it must be."""
    return {"value": value, "holds": bool(holds), "goal": goal}


def machine() -> dict:
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory_kb = int(Path("/proc/meminfo").read_text().split()[1])
    with psycopg.connect(ADMIN_URL) as conn:
        postgres = conn.execute("SHOW server_version").fetchone()[0]
    wrk = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory_gib": round(memory_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "postgresql": postgres,
        "wrk": wrk.split("\n")[0],
        # Other work on the machine shares its cores with the bench: the figures move.
        "load_average_at_start": list(os.getloadavg()),
    }


def write(report: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


def summary(report: dict) -> str:
    lines = ["", "targets:"]
    for name, result in report["targets"].items():
        verdict = "holds" if result["holds"] else "MISSED"
        lines.append(f"  {verdict:<7} {name}: {result['value']} (target {result['goal']})")
    for name, error in report.get("errors", {}).items():
        lines.append(f"  FAILED  scenario {name}: {error.splitlines()[-1]}")
    lines.append(f"\n{report['run_seconds']} s")
    return "\n".join(lines)


def markdown(report: dict) -> str:
    """The targets table and the API scenarios' table, as docs/performance.md has them."""
    lines = ["| scenario | target | goal | value | holds |", "|---|---|---|---:|---|"]
    for name, result in report["targets"].items():
        holds = "yes" if result["holds"] else "**no**"
        lines.append(
            f"| {result['scenario']} | {name} | {result['goal']} | {result['value']:,} | {holds} |"
        )
    api = report["scenarios"].get("api")
    if api:
        lines += ["", "| API scenario | req/s | p50 ms | p99 ms | ratio to no-op |"]
        lines.append("|---|---:|---:|---:|---:|")
        for row in api["rows"]:
            lines.append(
                f"| {row['label']} | {row['rps']:.0f} | {row['p50_ms']:.0f} | "
                f"{row['p99_ms']:.0f} | {row['ratio_to_noop']:.2f} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS / "latest.json"
    print(markdown(json.loads(source.read_text())))
