"""`make bench`: every scenario in one run, or the ones named (`make bench ONLY=events`).

    .venv/bin/python -m bench.run                    # every scenario, about 15 minutes
    .venv/bin/python -m bench.run --only api,send    # some of them
    .venv/bin/python -m bench.run --quick            # CI's smoke run: small data, short

Each scenario stands on a stack of its own (bench/stack.py): a copy of a database
migrated once for the run, the Cloud API stand-in, and the service as `make run` serves
it; and it waits for the task queue and the event outbox to be empty before each
measurement, failing when they do not empty in time. The run writes every target of
every scenario that ran to bench/results/latest.json, and the chart to
docs/img/bench.png. The quick run writes bench/results/quick.json and quick.png
instead, and fails only when a scenario fails, never on a target.
"""

import argparse
import sys
import time
import traceback
from datetime import UTC, datetime

from bench import (
    account_news,
    analytics,
    api,
    autoreply,
    backlog,
    campaigns,
    chart,
    contacts_import,
    events,
    fairness,
    inbox,
    instructions,
    media,
    send,
    statuses,
    throughput,
)
from bench.report import RESULTS, machine, summary, write
from bench.stack import ROOT, ensure_postgres, ensure_wrk, log, migrated_template

# In the order they run. `instructions` (callgrind, minutes, no target) runs only when named.
SCENARIOS = {
    "api": api.run,
    "send": send.run,
    "autoreply": autoreply.run,
    "events": events.run,
    "campaigns": campaigns.run,
    "media": media.run,
    "fairness": fairness.run,
    "backlog": backlog.run,
    "account_news": account_news.run,
    "contacts_import": contacts_import.run,
    "inbox": inbox.run,
    "analytics": analytics.run,
    "throughput": throughput.run,
    "statuses": statuses.run,
}
EXTRA = {"instructions": instructions.run}


def chosen(only: str | None) -> list[str]:
    if not only:
        return list(SCENARIOS)
    names = [name.strip() for name in only.split(",") if name.strip()]
    unknown = [name for name in names if name not in SCENARIOS | EXTRA]
    if unknown:
        raise SystemExit(f"unknown scenario {', '.join(unknown)}: {', '.join(SCENARIOS | EXTRA)}")
    return [name for name in {**SCENARIOS, **EXTRA} if name in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help=f"comma-separated, of {', '.join(SCENARIOS | EXTRA)}")
    parser.add_argument("--quick", action="store_true", help="small data, short runs (CI)")
    parser.add_argument("--no-chart", action="store_true")
    args = parser.parse_args()
    names = chosen(args.only)
    started = time.time()
    ensure_postgres()
    ensure_wrk()
    report = {
        "started_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "machine": machine(),
        "targets": {},
        "scenario_seconds": {},
        "scenarios": {},
        "errors": {},
    }
    with migrated_template() as template:
        for name in names:
            log(f"=== {name}")
            began = time.monotonic()
            try:
                result = {**SCENARIOS, **EXTRA}[name](template, args.quick)
            except Exception:
                report["errors"][name] = traceback.format_exc()
                log(f"{name} failed:\n{report['errors'][name]}")
                continue
            finally:
                report["scenario_seconds"][name] = round(time.monotonic() - began)
            for target_name, target in result.pop("targets").items():
                report["targets"][target_name] = {**target, "scenario": name}
            report["scenarios"][name] = result
    report["run_seconds"] = round(time.time() - started)
    stem = "quick" if args.quick else "latest"
    write(report, RESULTS / f"{stem}.json")
    log(f"wrote bench/results/{stem}.json")
    if not args.no_chart:
        picture = RESULTS / "quick.png" if args.quick else ROOT / "docs" / "img" / "bench.png"
        chart.draw(report, picture)
        log(f"wrote {picture.relative_to(ROOT)}")
    print(summary(report))
    if report["errors"]:
        sys.exit(f"failed: {', '.join(report['errors'])}")


if __name__ == "__main__":
    main()
