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


def figures(scenarios: dict) -> list[tuple[str, str, str]]:
    """(scenario, figure, value): what the targets do not show, for the docs' table."""
    found = []
    api = scenarios.get("api")
    if api:
        one, burst = api["single_client"], api["rate_limit_burst"]
        found += [
            ("api", "one client, largest organization: page 1 / deep page p50",
             f"{one['page_1']['p50_ms']} / {one['deep_page']['p50_ms']} ms"),
            ("api", "rate limit burst: let through / refused (429)",
             f"{burst['let_through']} / {burst['refused_429']}"),
        ]  # fmt: skip
    send = scenarios.get("send")
    if send:
        fast, paced = send["closed_loop"], send["paced"]
        found += [
            ("send", "as fast as 32 connections go: req/s, p99",
             f"{fast['rps']:.0f}/s, {fast['p99_ms']:.0f} ms"),
            ("send", "80/s offered: sent per second, late, p50 / p99",
             f"{paced['sent_rps']}/s, {paced['late']}, "
             f"{paced['p50_ms']:.0f} / {paced['p99_ms']:.0f} ms"),
        ]  # fmt: skip
    autoreply = scenarios.get("autoreply")
    if autoreply:
        for key in ("20_per_s", "50_per_s"):
            row = autoreply[key]
            found.append((
                "autoreply", f"{row['offered_rps']:g}/s: p50 / p99, webhook's p99, CPU a message",
                f"{row['p50_ms']} / {row['p99_ms']} ms, {row['webhook_p99_ms']} ms, "
                f"{row['cpu_ms_per_message']} ms",
            ))  # fmt: skip
        backlog = autoreply["webhook_backlog"]
        found.append((
            "autoreply", "backlog: webhooks a second (8 connections), replies queued, drained in",
            f"{backlog['rps']:.0f}/s, {backlog['replies_queued_at_end']}, "
            f"{backlog['drained_after_s']} s",
        ))  # fmt: skip
    events = scenarios.get("events")
    if events:
        spread, down = events["fan_out"], events["receiver_down"]
        found.append((
            "events", "fan-out: delivered, p50 / p99 / max, webhook's p99",
            f"{spread['deliveries_received']} of {spread['deliveries_expected']}, "
            f"{spread['p50_ms']} / {spread['p99_ms']} / {spread['max_ms']} ms, "
            f"{spread['webhook_p99_ms']} ms",
        ))  # fmt: skip
        for key, label in (("throughput_web_alone", "web alone"), ("throughput", "worker running")):
            row = events[key]
            low, middle, high = row["pair_ratio_min_median_max"]
            found.append((
                "events", f"throughput with / without endpoints, {label}: ratio (pairs)",
                f"{row['ratio']} ({low} / {middle} / {high})",
            ))  # fmt: skip
        found.append((
            "events", "receiver down: delivered, all in after it came up",
            f"{down['delivered']} of {down['messages']}, {down['all_delivered_after_up_s']} s",
        ))  # fmt: skip
    campaigns = scenarios.get("campaigns")
    if campaigns:
        one, two = campaigns["campaign"], campaigns["two_campaigns"]
        found += [
            ("campaigns", f"{one['recipients']:,} at {one['rate']}: shortest span of rate + 1",
             f"{one['tightest_span_of_rate_plus_1_s']} s"),
            ("campaigns", "API no-op p99, idle -> during",
             f"{one['noop_idle']['p99_ms']} -> {one['noop_during']['p99_ms']} ms"),
            ("campaigns", "two at once (80, 40): sustained per second",
             f"{two['A']['sustained_per_s']}, {two['B']['sustained_per_s']}"),
        ]  # fmt: skip
    media = scenarios.get("media")
    if media:
        runs = media["runs"]
        found.append((
            "media", "webhook's answer; the file in storage after it",
            ", ".join(f"{r['webhook_ms']:.0f} ms" for r in runs) + "; "
            + ", ".join(f"{r['available_after_answer_ms']:.0f} ms" for r in runs),
        ))  # fmt: skip
    fairness = scenarios.get("fairness")
    if fairness:
        found.append((
            "fairness", "B under A's load: reply p50 / p99, event p50 / p99",
            f"{fairness['b_reply_p50_ms']} / {fairness['b_reply_p99_ms']} ms, "
            f"{fairness['b_event_p50_ms']} / {fairness['b_event_p99_ms']} ms",
        ))  # fmt: skip
    bulk = scenarios.get("contacts_import")
    if bulk:
        done, book, out = bulk["import"], bulk["workbook_import"], bulk["export"]
        found += [
            ("contacts_import", f"{done['rows']:,} rows: seconds, the task's, the upload's answer; "
             "no-op p99 idle -> during",
             f"{done['seconds']} s, {done['task_ran_s']} s, {done['upload_answered_s']} s; "
             f"{done['noop_idle']['p99_ms']} -> {done['noop_during']['p99_ms']} ms"),
            ("contacts_import",
             f"{book['rows']:,}-row .xlsx: seconds, the task's, the upload's answer",
             f"{book['seconds']} s, {book['task_ran_s']} s, {book['upload_answered_s']} s"),
            ("contacts_import", f"export of {out['contacts']:,}: MB in seconds, peak RSS growth",
             f"{out['megabytes']} MB in {out['seconds']} s, {out['peak_rss_growth_mib']} MiB"),
        ]  # fmt: skip
    return found


def markdown(report: dict) -> str:
    """The targets table, the API scenarios' table and the other figures' table, as
    docs/performance.md has them."""
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
    lines += ["", "| scenario | figure | value |", "|---|---|---|"]
    lines += [
        f"| {name} | {figure} | {value} |" for name, figure, value in figures(report["scenarios"])
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS / "latest.json"
    print(markdown(json.loads(source.read_text())))
