"""The benchmark's chart: throughput and p99 per scenario, list latency against size."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: write a file
import matplotlib.pyplot as plt  # noqa: E402


def draw(report: dict, path: Path) -> None:
    rows = report["scenarios"]
    labels = [row["label"] for row in rows][::-1]
    figure, (throughput, p99, growth) = plt.subplots(
        3, 1, figsize=(10, 12), gridspec_kw={"height_ratios": [3, 3, 2]}
    )
    throughput.barh(labels, [row["rps"] for row in rows][::-1], color="#3b7dd8")
    throughput.set_xlabel("requests per second (higher is better)")
    for y, row in enumerate(rows[::-1]):
        throughput.annotate(
            f" {row['rps']:.0f}  ({row['ratio_to_noop']:.2f}x no-op)",
            (row["rps"], y),
            va="center",
            fontsize=8,
        )
    p99.barh(labels, [row["p99_ms"] for row in rows][::-1], color="#d8823b")
    p99.set_xlabel("p99 latency, ms (lower is better)")
    p99.set_xscale("log")

    lists = [row for row in rows if "organization_contacts" in row]
    sizes = [row["organization_contacts"] for row in lists]
    growth.plot(sizes, [row["p50_ms"] for row in lists], "o-", label="p50")
    growth.plot(sizes, [row["p99_ms"] for row in lists], "s-", label="p99")
    growth.set_xscale("log")
    growth.set_xlabel("contacts in the organization")
    growth.set_ylabel("GET /api/contacts latency, ms")
    growth.set_ylim(bottom=0)
    growth.legend()

    m = report["machine"]
    figure.suptitle(
        f"make bench: {m['cpus']} cores, {report['server']['workers']} workers x "
        f"{report['server']['threads']} threads ({report['started_at']})"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
