"""The inbound media scenario: a 5 MB video does not hold up the webhook, and the worker
streams it to storage.

A scratch PostgreSQL database, gunicorn serving the webhook and one `db_worker`
process, against the loopback Cloud API stand-in (devtools/cloud_api_server.py) run in
this process, which serves the media with the organization's token and a deliberate
delay before the download answers. Measured:

- the webhook's answer time for a message carrying the 5 MB video, and how long after
  it the file was available in storage (the 200 comes before the download);
- the worker's peak resident memory (VmHWM) before and after that download, after a
  warm-up of small media, against twice MEDIA_CHUNK_SIZE.

    .venv/bin/python -m bench.media [--size-mib 5] [--chunk-kib 1024] [--runs 3]

Writes bench/results/media-latest.json. See docs/performance.md.
"""

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.autoreply import signature  # noqa: E402
from bench.processes import stop_process_groups  # noqa: E402
from devtools.cloud_api_server import FakeCloudApi  # noqa: E402
from devtools.loopback import free_port, wait_until_listening  # noqa: E402

PYTHON = sys.executable
ADMIN_URL = os.environ.get("BENCH_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
APP_SECRET = "bench-app-secret"
ACCESS_TOKEN = "bench-access-token"
PHONE_NUMBER_ID = "100000000000001"
RESULTS = ROOT / "bench" / "results"


def log(message: str) -> None:
    print(f"[media {time.strftime('%H:%M:%S')}] {message}", flush=True)


def media_body(kind: str, media_id: str, mime_type: str) -> bytes:
    return json.dumps(
        {
            "object": "whatsapp_business_account",
            "entry": [
                {
                    "id": "100000000000000",
                    "changes": [
                        {
                            "field": "messages",
                            "value": {
                                "messaging_product": "whatsapp",
                                "metadata": {"phone_number_id": PHONE_NUMBER_ID},
                                "contacts": [
                                    {"profile": {"name": "Bench"}, "wa_id": "14155550100"}
                                ],
                                "messages": [
                                    {
                                        "from": "14155550100",
                                        "id": f"wamid.media.{uuid.uuid4().hex}",
                                        "timestamp": str(int(time.time())),
                                        "type": kind,
                                        kind: {"mime_type": mime_type, "id": media_id},
                                    }
                                ],
                            },
                        }
                    ],
                }
            ],
        }
    ).encode()


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def state(url: str, media_id: str) -> str | None:
    with psycopg.connect(url, autocommit=True) as db:
        row = db.execute("SELECT state FROM sending_chatmedia WHERE media_id = %s", [media_id])
        found = row.fetchone()
    return found[0] if found else None


def wait_available(url: str, media_id: str, timeout: float = 120) -> float:
    """Seconds until the media is available (polled every 10 ms)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        current = state(url, media_id)
        if current == "available":
            return time.monotonic() - start
        if current == "failed":
            raise SystemExit(f"media {media_id} failed")
        time.sleep(0.01)
    raise SystemExit(f"media {media_id} not available after {timeout} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=float, default=5)
    parser.add_argument("--chunk-kib", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--download-delay", type=float, default=0.5)
    options = parser.parse_args()

    name = f"bench_media_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    database_url = ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    processes: list[subprocess.Popen] = []
    graph = FakeCloudApi().start()
    try:
        var_dir = tempfile.mkdtemp(prefix="bench-media-")
        chunk = options.chunk_kib * 1024
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "VAR_DIR": var_dir,
            "MEDIA_ROOT": f"{var_dir}/media",
            "WHATSAPP_GRAPH_URL": graph.url,
            "MEDIA_CHUNK_SIZE": str(chunk),
            "ALLOWED_HOSTS": "127.0.0.1",
            "LOG_LEVEL": "WARNING",
            "DEBUG": "false",
        }
        manage(env, "migrate", "-v", "0")
        org = manage(env, "create_organization", "Media bench").strip().splitlines()[-1]
        manage(
            env,
            "configure_channel",
            org,
            "--phone-number-id",
            PHONE_NUMBER_ID,
            "--access-token",
            ACCESS_TOKEN,
            "--app-secret",
            APP_SECRET,
        )
        port = free_port()
        web = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "gunicorn",
                "messaging_project.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--worker-class",
                "gthread",
                "--workers",
                "1",
                "--threads",
                "8",
                "--no-control-socket",
            ],  # fmt: skip
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        processes.append(web)
        worker = subprocess.Popen(
            [PYTHON, "manage.py", "db_worker", "--threads", "1"],
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        processes.append(worker)
        wait_until_listening(port, timeout=60, process=web)
        hook = f"http://127.0.0.1:{port}/webhooks/whatsapp/{org}"
        session = requests.Session()
        session.trust_env = False

        def deliver(kind: str, media_id: str, mime_type: str) -> tuple[int, float]:
            body = media_body(kind, media_id, mime_type)
            headers = {"Content-Type": "application/json", "X-Hub-Signature-256": signature(body)}
            started = time.monotonic()
            status = session.post(hook, data=body, headers=headers, timeout=30).status_code
            return status, time.monotonic() - started

        # Warm-up: small images through the whole path, so that every module the fetch
        # uses is loaded and the worker's allocator has settled before the measurement.
        for n in range(5):
            media_id = f"9{n:014d}"
            graph.add_media(media_id, os.urandom(200 * 1024), token=ACCESS_TOKEN)
            deliver("image", media_id, "image/jpeg")
            wait_available(database_url, media_id)
        time.sleep(0.5)

        video = os.urandom(int(options.size_mib * 1024 * 1024))
        runs = []
        for n in range(options.runs):
            media_id = f"8{n:014d}"
            graph.add_media(
                media_id,
                video,
                token=ACCESS_TOKEN,
                mime_type="video/mp4",
                delay=options.download_delay,
            )
            before = peak_rss_kib(worker.pid)
            status, answered = deliver("video", media_id, "video/mp4")
            state_at_answer = state(database_url, media_id)
            available = wait_available(database_url, media_id)
            after = peak_rss_kib(worker.pid)
            stored = next(Path(var_dir, "media").rglob("video-*.mp4"), None)
            run = {
                "webhook_status": status,
                "webhook_ms": round(answered * 1000, 1),
                "state_when_answered": state_at_answer,
                "available_after_answer_ms": round((answered + available) * 1000, 1),
                "worker_peak_rss_before_kib": before,
                "worker_peak_rss_after_kib": after,
                "worker_peak_rss_growth_kib": after - before,
                "stored_bytes": stored.stat().st_size if stored else None,
            }
            if stored:
                stored.unlink()
            runs.append(run)
            log(json.dumps(run))
        growth = max(run["worker_peak_rss_growth_kib"] for run in runs)
        result = {
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "video_bytes": len(video),
            "chunk_bytes": chunk,
            "download_delay_s": options.download_delay,
            "runs": runs,
            "max_peak_rss_growth_kib": growth,
            "limit_kib": 2 * chunk // 1024,
            "within_limit": growth < 2 * chunk // 1024,
            "webhook_before_download": all(
                run["state_when_answered"] in ("pending", "fetching") for run in runs
            ),
        }
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "media-latest.json").write_text(json.dumps(result, indent=2) + "\n")
        log(
            f"peak RSS growth at most {growth} KiB (limit {result['limit_kib']} KiB); "
            f"webhook {max(r['webhook_ms'] for r in runs)} ms at most"
        )
        if not (result["within_limit"] and result["webhook_before_download"]):
            raise SystemExit("media bench: over the memory limit, or the webhook waited")
    finally:
        graph.stop()
        stop_process_groups(processes, timeout=20)
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
