"""The `contacts_import` scenario: contacts in bulk, as a business moving in brings them.

First the export: `GET /api/contacts/export` of an organization with 1,000,000 contacts
(seeded in SQL by bench/seed.py), read as it streams; the gunicorn workers' peak resident
memory (VmHWM) before and after says whether the stream kept it flat. Then the import:
100,000 rows of a spreadsheet's CSV (unique numbers written as people write them, a group
column, an extra column kept in metadata) sent to `POST /api/contacts/import`, timed from
the upload until its progress says completed. Meanwhile the probe of the campaigns
scenario calls the API's no-op (`GET /api/me`) 20 times a second; its p99 is compared
with the same probe's while idle, in the same run. The export runs first: the upload's
own request (a 7 MB file parsed in the web process) raises a worker's peak memory too.
Last, the same number of other contacts as the original's export, an `.xlsx` workbook:
its request must answer at once (the task reads the sheet, which takes tens of seconds).
"""

import io
import json
import os
import threading
import time
from pathlib import Path

import requests
from openpyxl import Workbook

from bench.campaigns import Probe
from bench.report import target
from bench.stack import Stack, log, peak_rss_kib

FULL = {"export_contacts": 1_000_000, "import_rows": 100_000, "idle_s": 30}
QUICK = {"export_contacts": 20_000, "import_rows": 5_000, "idle_s": 3}
IMPORT_SECONDS, P99_RATIO, RSS_GROWTH_MIB = 60, 2, 50
# A workbook's request, from the upload to its 202: far under nginx's 60 s timeout.
WORKBOOK_REQUEST_SECONDS = 5
IMPORT_TIMEOUT = 600
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def import_file(rows: int) -> bytes:
    """A spreadsheet's export: a header as people write it, UK mobiles with spaces."""
    lines = ["First Name,Last Name,Phone,Email,Group,City"]
    lines += [
        f"First{n},Last{n},+44 7700 {n:06d},person{n}@example.com,Group {n % 5},City {n % 50}"
        for n in range(rows)
    ]
    return ("\r\n".join(lines) + "\r\n").encode()


def import_workbook(rows: int, first: int) -> bytes:
    """The original product's export as an `.xlsx` workbook (app/Exports/ContactsExport.php's
    columns), of numbers from `first` on, written a row at a time by openpyxl."""
    book = Workbook(write_only=True)
    sheet = book.create_sheet()
    sheet.append(["First name", "Last name", "Phone", "Email", "Group name", "City"])
    for n in range(first, first + rows):
        sheet.append(
            [f"First{n}", f"Last{n}", f"+44 7700 {n:06d}", f"person{n}@example.com",
             f"Group {n % 5}", f"City {n % 50}"]
        )  # fmt: skip
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def resident_kib(pid: int) -> int:
    """VmRSS: the resident memory the process has now."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def export(stack: Stack, token: str, expected: int) -> dict:
    """The whole export read as it streams; rows, bytes, seconds and each web worker's
    resident memory: peak before, highest sampled meanwhile, peak after."""
    headers = {"Authorization": f"Bearer {token}"}
    pids = stack.web_pids()
    before = {pid: peak_rss_kib(pid) for pid in pids}
    sampled = {pid: resident_kib(pid) for pid in pids}
    streaming = threading.Event()

    def sample() -> None:
        while not streaming.wait(0.1):
            for pid in pids:
                sampled[pid] = max(sampled[pid], resident_kib(pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    lines = size = 0
    with requests.get(
        f"{stack.base}/api/contacts/export", headers=headers, stream=True, timeout=600
    ) as response:
        response.raise_for_status()
        for chunk in response.iter_content(chunk_size=256 * 1024):
            size += len(chunk)
            lines += chunk.count(b"\n")
    seconds = time.monotonic() - started
    streaming.set()
    sampler.join(5)
    after = {pid: peak_rss_kib(pid) for pid in pids}
    growth = max((after[pid] - before[pid]) / 1024 for pid in pids)
    if lines - 1 != expected:
        raise RuntimeError(f"the export gave {lines - 1:,} rows, not {expected:,}")
    return {
        "contacts": expected,
        "megabytes": round(size / 1e6, 1),
        "seconds": round(seconds, 1),
        "rows_per_s": round(expected / seconds),
        "peak_rss_before_mib": {str(p): round(before[p] / 1024, 1) for p in pids},
        "rss_sampled_during_mib": {str(p): round(sampled[p] / 1024, 1) for p in pids},
        "peak_rss_after_mib": {str(p): round(after[p] / 1024, 1) for p in pids},
        "peak_rss_growth_mib": round(growth, 1),
    }


def run_import(stack: Stack, token: str, rows: int, *, workbook: bool = False) -> dict:
    """One upload of `rows` rows (CSV, or a workbook of other numbers), waited for; the
    seconds from the upload to completed."""
    headers = {"Authorization": f"Bearer {token}"}
    if workbook:
        upload = ("contacts.xlsx", import_workbook(rows, first=rows), XLSX)
    else:
        upload = ("contacts.csv", import_file(rows), "text/csv")
    content = upload[1]
    started = time.monotonic()
    response = requests.post(
        f"{stack.base}/api/contacts/import", files={"file": upload}, headers=headers, timeout=300
    )
    uploaded = time.monotonic() - started
    if response.status_code != 202:
        raise RuntimeError(f"the import was refused: {response.status_code} {response.text[:300]}")
    uuid_ = response.json()["data"]["uuid"]
    while True:
        report = requests.get(
            f"{stack.base}/api/contacts/imports/{uuid_}", headers=headers, timeout=30
        ).json()["data"]
        if report["status"] in ("completed", "failed"):
            break
        if time.monotonic() - started > IMPORT_TIMEOUT:
            raise RuntimeError(f"the import did not finish in {IMPORT_TIMEOUT} s: {report}")
        time.sleep(0.25)
    seconds = time.monotonic() - started
    if (report["status"], report["created"], report["failed"]) != ("completed", rows, 0):
        raise RuntimeError(f"the import did not create every row: {json.dumps(report)[:500]}")
    # The task's own time, as the database has it: from its first batch to its end.
    ran = stack.sql(
        "SELECT EXTRACT(EPOCH FROM finished_at - started_at) FROM contacts_contactimport "
        "WHERE uuid = %s",
        [uuid_],
    )[0]
    return {
        "rows": rows,
        "megabytes": round(len(content) / 1e6, 1),
        "seconds": round(seconds, 1),
        "upload_answered_s": round(uploaded, 2),
        "task_ran_s": round(float(ran), 1),
        "rows_per_s": round(rows / seconds),
    }


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    sizes = {"contacts": [config["export_contacts"]], "replies": 0, "chats": 0}
    t = time.monotonic()
    with Stack(template, seed_module=("bench.seed", json.dumps(sizes)), stand_in=False) as stack:
        seeded = time.monotonic() - t
        log(f"contacts_import: seeded {sizes['contacts'][0]:,} contacts in {seeded:.0f} s")
        orgs = json.loads(stack.seeded)["organizations"]
        large = orgs[f"contacts_{config['export_contacts']}"]["token"]
        empty = orgs["writes"]["token"]
        # Every worker warmed up by the export's code on an empty organization (each
        # thread's first request loads what it needs), so that the peak before is theirs.
        for _ in range(8):
            export_warmup = requests.get(
                f"{stack.base}/api/contacts/export",
                headers={"Authorization": f"Bearer {orgs['burst']['token']}"},
                timeout=30,
            )
            export_warmup.raise_for_status()
        exported = export(stack, large, config["export_contacts"])
        log(
            f"export: {exported['contacts']:,} contacts, {exported['megabytes']} MB in "
            f"{exported['seconds']} s; peak RSS growth {exported['peak_rss_growth_mib']} MiB"
        )
        stack.wait_drained("before the idle probe")
        load_before = list(os.getloadavg())
        with Probe(stack.base, empty) as idle:
            time.sleep(config["idle_s"])
        with Probe(stack.base, empty) as during:
            imported = run_import(stack, empty, config["import_rows"])
        load_after = list(os.getloadavg())
        imported.update(noop_idle=idle.summary(), noop_during=during.summary())
        log(
            f"import: {imported['rows']:,} rows in {imported['seconds']} s "
            f"(task {imported['task_ran_s']} s); no-op p99 idle "
            f"{imported['noop_idle']['p99_ms']} ms, during {imported['noop_during']['p99_ms']} ms"
        )
        workbook = run_import(stack, empty, config["import_rows"], workbook=True)
        log(
            f"workbook import: {workbook['rows']:,} rows in {workbook['seconds']} s "
            f"(request {workbook['upload_answered_s']} s, task {workbook['task_ran_s']} s)"
        )
    slowdown = round(
        imported["noop_during"]["p99_ms"] / max(0.1, imported["noop_idle"]["p99_ms"]), 2
    )
    rows, seconds = imported["rows"], imported["seconds"]
    growth = exported["peak_rss_growth_mib"]
    answered = workbook["upload_answered_s"]
    return {
        "targets": {
            f"contacts import: {rows:,} rows, seconds": target(
                seconds, seconds < IMPORT_SECONDS, goal=f"< {IMPORT_SECONDS}"
            ),
            "contacts import: no-op p99 during / idle": target(
                slowdown, slowdown <= P99_RATIO, goal=f"<= {P99_RATIO}"
            ),
            f"contacts import: {rows:,}-row .xlsx, the request's seconds": target(
                answered,
                answered < WORKBOOK_REQUEST_SECONDS,
                goal=f"< {WORKBOOK_REQUEST_SECONDS}",
            ),
            f"contacts export: {exported['contacts']:,} rows, web worker's peak RSS growth MiB": (
                target(growth, growth < RSS_GROWTH_MIB, goal=f"< {RSS_GROWTH_MIB}")
            ),
        },
        "import": imported,
        "workbook_import": workbook,
        "export": exported,
        "load_average": {"before_import": load_before, "after_import": load_after},
    }
