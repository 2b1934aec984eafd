"""CPU time by kind of process, read from /proc: where a scenario's CPU went.

`snapshot()` sums the user and system time of every process on the machine into kinds
named by their command lines (the web server, the task worker, PostgreSQL, the Cloud
API stand-in, the load driver, anything else); `spent(before, after)` is the difference
in milliseconds. Processes that ended between two snapshots are missing from the second,
so a kind can only be read as "at least".

On a machine other work shares, `snapshot(service=..., database=...)` counts as the
service only its own processes: the web server and worker among `service` (a stack's
process tree) and the PostgreSQL backends of `database`; the cluster's background
processes (WAL writer, checkpointer...) are `postgresql background`, and the rest of the
machine's gunicorns, workers and backends `other`.
"""

import os
import re
from pathlib import Path

KINDS = (
    ("gunicorn", "web"),
    ("db_worker", "worker"),
    ("postgres", "postgresql"),
    ("cloud_stub", "stand-in"),
    ("webhook_receiver", "receiver"),
    ("redis", "redis"),
    ("honcho", "honcho"),
)
TICKS = os.sysconf("SC_CLK_TCK")
BACKEND = re.compile(r"postgres: (?:\S+: )?\S+ (?P<database>\S+) (?:\S+\(\d+\)|\[local\])")


def kind_of(pid: int, command: str, service: set[int] | None = None, database: str = "") -> str:
    if pid == os.getpid():
        return "driver"
    for needle, kind in KINDS:
        if needle in command:
            if kind in ("web", "worker") and service is not None and pid not in service:
                return "other"
            if kind == "postgresql" and database:
                return postgres_kind(command, database)
            return kind
    return "other"


def postgres_kind(command: str, database: str) -> str:
    """A client backend ("postgres: [CLUSTER: ]USER DATABASE HOST(PORT) STATE") or an
    autovacuum worker is the service's when it works on `database`; the background
    processes serve every database."""
    backend = BACKEND.search(command)
    if backend:
        return "postgresql" if backend["database"] == database else "other"
    if "autovacuum worker" in command:
        return "postgresql" if command.split()[-1] == database else "other"
    return "postgresql background"


def snapshot(
    system_only: bool = False, *, service: set[int] | None = None, database: str = ""
) -> dict[int, tuple[str, float]]:
    """Each live process: its kind and the CPU seconds it has used (only those spent in
    the kernel with `system_only`: system calls, waking threads, the network). With
    `service` and `database`, only those processes and backends are the service's."""
    seen: dict[int, tuple[str, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:  # it ended meanwhile
            continue
        fields = stat.rpartition(")")[2].split()
        # utime and stime are fields 14 and 15 of stat; [2:] after the name and state.
        seconds = (int(fields[12]) + (0 if system_only else int(fields[11]))) / TICKS
        kind = kind_of(int(entry.name), command or stat, service, database)
        seen[int(entry.name)] = (kind, seconds)
    return seen


def spent(before: dict, after: dict) -> dict[str, float]:
    """Milliseconds of CPU by kind between two snapshots (new processes count in full)."""
    totals: dict[str, float] = {}
    for pid, (kind, seconds) in after.items():
        used = seconds - before.get(pid, (kind, 0.0))[1]
        if used > 0:
            totals[kind] = totals.get(kind, 0.0) + used * 1000
    return {kind: round(ms, 1) for kind, ms in sorted(totals.items(), key=lambda kv: -kv[1])}
