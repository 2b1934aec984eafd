"""LOG_FORMAT=json: every line the web process (gunicorn, with its own lines) and the
worker print is a JSON object, from start to stop, as a log shipper reads them."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from devtools.cloud_api_server import FakeCloudApi
from devtools.loopback import free_port, wait_until_listening
from tests.inbound.conftest import APP_SECRET, envelope, sign, text_message
from tests.tasks.processes import ROOT, wait_until
from tests.tasks.test_procfile import SETUP, manage

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent


def lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


def shop(env: dict) -> str:
    """In the migrated database (conftest's `migrated_database_in`), an organization on
    the fake Cloud API that answers "hours" with a canned reply; its uuid."""
    manage(env, "create_organization", "Shop")
    manage(
        env,
        "configure_channel",
        "Shop",
        "--phone-number-id",
        "106540352242922",
        "--access-token",
        "token",
        "--app-secret",
        APP_SECRET,
    )
    return manage(env, "shell", "-c", SETUP).splitlines()[-1]


def test_every_line_the_web_and_the_worker_print_is_json(tmp_path, migrated_database_in):
    port = free_port()
    with FakeCloudApi() as graph:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("DATABASE_")},
            "VAR_DIR": str(tmp_path),
            "SECRET_KEY": "json-logs-test",
            "REDIS_URL": "",
            "LOG_FORMAT": "json",
            "LOG_LEVEL": "INFO",
            "WHATSAPP_GRAPH_URL": graph.url,
            "METRICS_TOKEN": "metrics-token",
            "PORT": str(port),
            "WORKERS": "2",
            "THREADS": "2",
            "TASK_WORKER_THREADS": "2",
            "PATH": f"{BIN}:{os.environ['PATH']}",
        }
        migrated_database_in(tmp_path)
        organization = shop(env)

        web_out, web_err = tmp_path / "web.out", tmp_path / "web.err"
        worker_out, worker_err = tmp_path / "worker.out", tmp_path / "worker.err"
        # The Procfile's two commands.
        web = subprocess.Popen(
            [str(BIN / "gunicorn"), "-c", "python:messaging_project.gunicorn_config"],
            cwd=ROOT,
            env=env,
            stdout=web_out.open("w"),
            stderr=web_err.open("w"),
        )
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "db_worker"],
            cwd=ROOT,
            env=env,
            stdout=worker_out.open("w"),
            stderr=worker_err.open("w"),
        )
        try:
            assert wait_until_listening(port, timeout=60, process=web), web_err.read_text()
            base = f"http://127.0.0.1:{port}"
            body = json.dumps(envelope(text_message("hours?"))).encode()
            signed = {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)}
            url = f"{base}/webhooks/whatsapp/{organization}"
            assert requests.post(url, data=body, headers=signed, timeout=30).status_code == 200
            wait_until(lambda: graph.requests, what="the worker's auto-reply")
            # A refused token (a warning), an unknown page, a wrong method, the metrics.
            bearer = {"Authorization": "Bearer wam_000000000000_" + "x" * 43}
            assert requests.get(f"{base}/api/contacts", headers=bearer, timeout=30).status_code
            assert requests.get(f"{base}/nowhere", timeout=30).status_code == 404
            assert requests.put(url, timeout=30).status_code == 405
            metrics = {"Authorization": "Bearer metrics-token"}
            assert requests.get(f"{base}/metrics", headers=metrics, timeout=30).ok
        finally:
            for process in (web, worker):
                process.send_signal(signal.SIGTERM)
            codes = [process.wait(timeout=60) for process in (web, worker)]

    printed = {path.name: lines(path) for path in (web_out, web_err, worker_out, worker_err)}
    assert codes == [0, 0], printed
    for name, text in printed.items():
        for line in text:
            try:
                entry = json.loads(line)
            except ValueError:
                pytest.fail(f"{name} printed a line that is not JSON: {line!r}")
            assert isinstance(entry, dict) and {"time", "level", "logger", "message"} <= set(entry)
    web_lines = [json.loads(line) for line in printed["web.out"] + printed["web.err"]]
    messages = [(line["logger"], line["message"]) for line in web_lines]
    assert ("gunicorn.error", f"Listening at: http://127.0.0.1:{port} ({web.pid})") in messages
    assert any(logger == "messaging.requests" for logger, _ in messages)
    assert ("gunicorn.error", "Shutting down: Master") in messages
    worker_lines = [json.loads(line) for line in printed["worker.out"] + printed["worker.err"]]
    assert any(line["message"].endswith(" stopped") for line in worker_lines)
