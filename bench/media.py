"""The `media` scenario: a 5 MB video does not hold up the webhook, and the worker streams
it to storage.

gunicorn (1 worker x 8 threads) serves the webhook and the task worker runs one thread,
against the loopback Cloud API stand-in (devtools/cloud_api_server.py) run in this
process, which serves the media to the organization's token only, its download
answering after 0.5 s (a slow CDN, so that "before the download" cannot be luck). Five
200 KiB images first warm the worker up (every module the fetch uses loaded, the
allocator settled); then three videos, one at a time. For each: the webhook's answer
time, the media's state at that moment, when the file was in storage, and the worker's
peak resident memory (VmHWM) before and after, against twice MEDIA_CHUNK_SIZE.
"""

import json
import os
import time
from pathlib import Path

import requests

from bench.payloads import ACCESS_TOKEN, CLOUD_API_SEED, media_body, signature
from bench.report import target
from bench.stack import Stack, log, peak_rss_kib
from devtools.cloud_api_server import FakeCloudApi

CHUNK = 1024 * 1024
DOWNLOAD_DELAY = 0.5
SENDER = "14155550100"


def state(stack: Stack, media_id: str) -> str | None:
    found = stack.sql("SELECT state FROM sending_chatmedia WHERE media_id = %s", [media_id])
    return found[0] if found else None


def wait_available(stack: Stack, media_id: str, timeout: float = 120) -> float:
    """Seconds until the media is available (polled every 10 ms)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        current = state(stack, media_id)
        if current == "available":
            return time.monotonic() - start
        if current == "failed":
            raise RuntimeError(f"media {media_id} failed")
        time.sleep(0.01)
    raise RuntimeError(f"media {media_id} not available after {timeout} s")


def deliver(stack: Stack, organization: str, kind: str, media_id: str, mime_type: str):
    """The webhook for one inbound media message: its status and seconds to answer."""
    body = media_body(SENDER, kind, media_id, mime_type)
    headers = {"Content-Type": "application/json", "X-Hub-Signature-256": signature(body)}
    started = time.monotonic()
    response = requests.post(
        f"{stack.base}/webhooks/whatsapp/{organization}", data=body, headers=headers, timeout=30
    )
    return response.status_code, time.monotonic() - started


def video_run(stack: Stack, graph: FakeCloudApi, organization: str, n: int, video: bytes) -> dict:
    media_id = f"8{n:014d}"
    graph.add_media(
        media_id, video, token=ACCESS_TOKEN, mime_type="video/mp4", delay=DOWNLOAD_DELAY
    )
    worker = stack.worker_pids()[0]
    before = peak_rss_kib(worker)
    status, answered = deliver(stack, organization, "video", media_id, "video/mp4")
    state_at_answer = state(stack, media_id)
    available = wait_available(stack, media_id)
    after = peak_rss_kib(worker)
    stored = next(Path(stack.scratch, "media").rglob("video-*.mp4"), None)
    size = stored.stat().st_size if stored else None
    if stored:
        stored.unlink()
    return {
        "webhook_status": status,
        "webhook_ms": round(answered * 1000, 1),
        "state_when_answered": state_at_answer,
        "available_after_answer_ms": round((answered + available) * 1000, 1),
        "worker_peak_rss_before_kib": before,
        "worker_peak_rss_after_kib": after,
        "worker_peak_rss_growth_kib": after - before,
        "stored_bytes": size,
    }


def run(template: str, quick: bool) -> dict:
    size, runs = (1024 * 1024, 1) if quick else (5 * 1024 * 1024, 3)
    settings = {"MEDIA_CHUNK_SIZE": str(CHUNK), "TASK_WORKER_THREADS": "1"}
    with (
        FakeCloudApi() as graph,
        Stack(
            template,
            seed=CLOUD_API_SEED,
            use_redis=False,
            stand_in=False,
            graph_url=graph.url,
            workers=1,
            threads=8,
            **settings,
        ) as stack,
    ):
        organization = json.loads(stack.seeded)["uuid"]
        for n in range(5):
            media_id = f"9{n:014d}"
            graph.add_media(media_id, os.urandom(200 * 1024), token=ACCESS_TOKEN)
            deliver(stack, organization, "image", media_id, "image/jpeg")
            wait_available(stack, media_id)
        time.sleep(0.5)
        video = os.urandom(size)
        rows = []
        for n in range(runs):
            stack.wait_drained("before the video")
            rows.append(video_run(stack, graph, organization, n, video))
            log(f"media: {json.dumps(rows[-1])}")
    growth = max(row["worker_peak_rss_growth_kib"] for row in rows)
    limit = 2 * CHUNK // 1024
    early = sum(row["state_when_answered"] in ("pending", "fetching") for row in rows)
    stored = all(row["stored_bytes"] == size for row in rows)
    return {
        "targets": {
            "media: webhooks answered before the download": target(
                early, early == len(rows), goal=f"{len(rows)} of {len(rows)}"
            ),
            "media: worker's peak memory growth, KiB, file stored whole": target(
                growth, growth < limit and stored, goal=f"< {limit:,}"
            ),
        },
        "video_bytes": size,
        "chunk_bytes": CHUNK,
        "download_delay_s": DOWNLOAD_DELAY,
        "runs": rows,
    }
