"""The run's one chart: the API's throughput against the no-op, the latencies of every
scenario that measures them, and every target with its value."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: write a file
import matplotlib.pyplot as plt  # noqa: E402


def latencies(report: dict) -> list[tuple[str, float, float]]:
    """(label, p50 ms, p99 ms) of each measurement that has them, in the run's order."""
    found = []
    scenarios = report["scenarios"]
    for row in scenarios.get("api", {}).get("rows", []):
        found.append((row["label"], row["p50_ms"], row["p99_ms"]))
    send = scenarios.get("send")
    if send:
        found.append(("send at 80/s offered (stand-in 200 ms)", *p50_p99(send["paced"])))
    autoreply = scenarios.get("autoreply", {})
    for key, row in autoreply.items():
        if key.endswith("_per_s"):
            label = f"message to its auto-reply, {row['offered_rps']:g}/s"
            found.append((label, *p50_p99(row)))
    if "events" in scenarios:
        fan_out = scenarios["events"]["fan_out"]
        found.append(("webhook's 200 to its event delivery", *p50_p99(fan_out)))
    return found


def p50_p99(row: dict) -> tuple[float, float]:
    return row["p50_ms"], row["p99_ms"]


def draw(report: dict, path: Path) -> None:
    api = report["scenarios"].get("api", {}).get("rows", [])
    timed = latencies(report)
    targets = report["targets"]
    heights = [max(2, 0.35 * len(api))] if api else []
    heights += [max(2, 0.35 * len(timed))] if timed else []
    heights.append(max(1.5, 0.28 * len(targets)))
    figure, axes = plt.subplots(
        len(heights), 1, figsize=(12, sum(heights) + 1.5), gridspec_kw={"height_ratios": heights}
    )
    axes = list(axes) if len(heights) > 1 else [axes]
    if api:
        throughput = axes.pop(0)
        labels = [row["label"] for row in api][::-1]
        rps = [row["rps"] for row in api][::-1]
        throughput.barh(labels, rps, color="#3b7dd8")
        throughput.set_xlabel("API requests per second (higher is better)")
        for y, row in enumerate(api[::-1]):
            note = f" {row['rps']:.0f}  ({row['ratio_to_noop']:.2f} x no-op)"
            throughput.annotate(note, (row["rps"], y), va="center", fontsize=8)
    if timed:
        latency = axes.pop(0)
        labels = [label for label, *_ in timed][::-1]
        ys = range(len(labels))
        latency.barh([y + 0.2 for y in ys], [p99 for *_, p99 in timed][::-1], 0.4, label="p99")
        latency.barh([y - 0.2 for y in ys], [p50 for _, p50, _ in timed][::-1], 0.4, label="p50")
        latency.set_yticks(list(ys), labels)
        latency.set_xscale("log")
        latency.set_xlabel("latency, ms (lower is better)")
        latency.legend(loc="lower right")
    table = axes.pop(0)
    table.axis("off")
    rows = [
        [result["scenario"], name, result["goal"], f"{result['value']:,}"]
        + ["holds" if result["holds"] else "MISSED"]
        for name, result in targets.items()
    ]
    if rows:
        drawn = table.table(
            cellText=rows,
            colLabels=["scenario", "target", "goal", "value", ""],
            cellLoc="left",
            colWidths=[0.1, 0.56, 0.12, 0.12, 0.1],
            bbox=[-0.4, 0, 1.4, 1],  # under the other panels' labels too
        )
        drawn.auto_set_font_size(False)
        drawn.set_fontsize(8)
        for row, result in enumerate(targets.values(), start=1):
            colour = "#d7f0d2" if result["holds"] else "#f6c9c4"
            for column in range(5):
                drawn[row, column].set_facecolor(colour)
    m = report["machine"]
    figure.suptitle(f"make bench: {', '.join(report['scenarios'])} on {m['cpus']} cores")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
