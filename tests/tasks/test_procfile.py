"""`make run`'s processes: the Procfile under honcho, on the embedded default (SQLite,
no configuration). The web process takes a webhook, the worker sends its auto-reply,
and Ctrl-C stops both."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from devtools.cloud_api_server import FakeCloudApi
from devtools.loopback import free_port
from devtools.loopback import reachable as listening
from tests.inbound.conftest import APP_SECRET, envelope, sign, text_message
from tests.tasks.processes import ROOT, wait_until

pytestmark = pytest.mark.slow


def manage(env: dict, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


SETUP = """
from accounts.models import Organization
from canned_replies.services import create_canned_reply
organization = Organization.objects.get(name="Shop")
create_canned_reply(organization=organization, name="hours", trigger="hours",
                    match_criteria="contains", response="9 to 5")
print(organization.uuid)
"""


def make_run_metrics_directory(env: dict) -> Path:
    """Where `make run` has its processes count: the directory it empties, then hands to
    honcho (read from `make -n run`, which prints the commands without running them)."""
    dry_run = subprocess.run(
        ["make", "-n", "run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    ).stdout
    found = re.search(r'PROMETHEUS_MULTIPROC_DIR="([^"]+)" \S*honcho start', dry_run)
    assert found, dry_run
    assert f'find "{found[1]}" -mindepth 1 -delete' in dry_run
    return Path(found[1])


def scraped_sends(port: str) -> float:
    response = requests.get(
        f"http://127.0.0.1:{port}/metrics",
        headers={"Authorization": "Bearer metrics-token"},
        timeout=30,
    )
    return sum(
        sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
        if sample.name == "whatsapp_sends_total"
    )


def test_the_procfile_runs_the_web_and_the_worker_and_ctrl_c_stops_both(
    tmp_path, migrated_database_in
):
    with FakeCloudApi() as graph:
        env = {
            **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
            "VAR_DIR": str(tmp_path),
            "SECRET_KEY": "procfile-test",
            "DEBUG": "false",
            "REDIS_URL": "",
            "WHATSAPP_GRAPH_URL": graph.url,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "PORT": str(free_port()),
            "WORKERS": "1",
            "THREADS": "4",
            "TASK_WORKER_THREADS": "2",
            "METRICS_TOKEN": "metrics-token",
        }
        # One metrics view, as `make run` gives it: the worker's sends in the web's scrape.
        metrics = make_run_metrics_directory(env)
        assert metrics == tmp_path / "metrics"
        metrics.mkdir()
        env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics)
        migrated_database_in(tmp_path)
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
        organization_uuid = manage(env, "shell", "-c", SETUP).splitlines()[-1]
        log = (tmp_path / "honcho.log").open("w")
        honcho = subprocess.Popen(
            [str(Path(sys.executable).parent / "honcho"), "start", "--no-colour"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_until(lambda: listening(int(env["PORT"])), what="the web process")
            body = json.dumps(envelope(text_message("hours?"))).encode()
            response = requests.post(
                f"http://127.0.0.1:{env['PORT']}/webhooks/whatsapp/{organization_uuid}",
                data=body,
                headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)},
                timeout=30,
            )
            assert response.status_code == 200
            wait_until(lambda: graph.requests, what="the worker's auto-reply")
            assert graph.requests[0].json["text"]["body"] == "9 to 5"
            wait_until(lambda: scraped_sends(env["PORT"]) == 1, what="the send in the scrape")

            honcho.send_signal(signal.SIGINT)  # Ctrl-C
            assert honcho.wait(timeout=30) is not None
        finally:
            if honcho.poll() is None:
                honcho.kill()
            log.close()
        output = (tmp_path / "honcho.log").read_text()
        assert "web.1 stopped" in output and "worker.1 stopped" in output, output
        assert re.search(r"Worker \S+ stopped", output), output  # it finished cleanly
        assert not listening(int(env["PORT"]))
