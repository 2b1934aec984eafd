"""deploy/: the systemd units verify and start what the Procfile starts, the nginx site
passes the headers the service believes, and the metrics directory the units share
outlives a web restart: the running worker's counters are still in the scrape."""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from devtools.cloud_api_server import FakeCloudApi
from devtools.loopback import free_port, wait_until_listening
from tests.inbound.conftest import envelope, sign, text_message
from tests.operations.test_json_logs import shop
from tests.tasks.processes import ROOT, wait_until

UNITS = ROOT / "deploy" / "systemd"
INSTALLED_AT = "/srv/messaging"  # the units' WorkingDirectory
METRICS_DIR = "/run/messaging/metrics"
BIN = Path(sys.executable).parent


def unit(name: str) -> dict[str, list[str]]:
    """A unit's settings, each key with its values in order (systemd repeats keys)."""
    settings: dict[str, list[str]] = {}
    for line in (UNITS / name).read_text().splitlines():
        if "=" in line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def procfile() -> dict[str, str]:
    entries = (line.partition(":") for line in (ROOT / "Procfile").read_text().splitlines())
    return {name: command.strip().removeprefix("exec ") for name, _, command in entries}


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_the_units_verify(tmp_path):
    # Installed where this checkout is, so that the programs they start exist.
    for path in UNITS.glob("*.service"):
        (tmp_path / path.name).write_text(path.read_text().replace(INSTALLED_AT, str(ROOT)))
    result = subprocess.run(
        ["systemd-analyze", "verify", *sorted(map(str, tmp_path.glob("*.service")))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # It exits 0 even on a misspelt key or value: anything it says is a finding.
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result


def test_the_units_start_what_the_procfile_starts():
    processes = procfile()
    web, worker = unit("messaging-web.service"), unit("messaging-worker.service")
    venv = f"{INSTALLED_AT}/.venv/bin/"
    assert web["ExecStart"] == [venv + processes["web"]]
    assert worker["ExecStart"] == [venv + processes["worker"]]
    for settings in (web, worker):
        assert settings["WorkingDirectory"] == [INSTALLED_AT]
        assert settings["EnvironmentFile"] == ["/etc/messaging.env"]
        assert settings["Restart"] == ["always"]


def test_the_units_share_a_metrics_directory_that_a_restart_keeps():
    for name in ("messaging-web.service", "messaging-worker.service"):
        settings = unit(name)
        assert f"PROMETHEUS_MULTIPROC_DIR={METRICS_DIR}" in settings["Environment"]
        assert settings["RuntimeDirectory"] == ["messaging/metrics"]
        assert settings["RuntimeDirectoryPreserve"] == ["yes"]
        # Nothing empties it when one of them starts: the other may be running.
        assert not any("metrics" in command for command in settings.get("ExecStartPre", []))


def test_the_nginx_site_proxies_to_the_web_unit_with_the_headers_the_service_believes():
    site = (ROOT / "deploy" / "nginx" / "messaging.conf").read_text()
    [port] = [v.split("=")[1] for v in unit("messaging-web.service")["Environment"] if "PORT=" in v]
    assert f"server 127.0.0.1:{port};" in site
    # Appended (the service reads it from the right, past TRUSTED_PROXIES) and overwritten.
    assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in site
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in site
    assert (
        "TRUSTED_PROXIES=127.0.0.1" in site and "SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto" in site
    )


def test_the_bootstrap_site_serves_the_challenge_where_the_full_site_does():
    bootstrap = (ROOT / "deploy" / "nginx" / "bootstrap.conf").read_text()
    site = (ROOT / "deploy" / "nginx" / "messaging.conf").read_text()
    # certbot's webroot is the same for the first certificate and its renewals.
    challenge = "location /.well-known/acme-challenge/ {\n        root /var/www/html;\n    }"
    assert challenge in bootstrap and challenge in site
    # No certificate is named before one exists.
    assert "ssl_certificate" not in bootstrap and "443" not in bootstrap


def scraped_sends(port: int) -> float:
    response = requests.get(
        f"http://127.0.0.1:{port}/metrics",
        headers={"Authorization": "Bearer metrics-token"},
        timeout=30,
    )
    assert response.status_code == 200
    return sum(
        sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
        if sample.name == "whatsapp_sends_total" and sample.labels.get("result") == "accepted"
    )


def start_web(env: dict, log: Path) -> subprocess.Popen:
    """The web unit's start: its ExecStartPre commands (on the test's directories), then
    its ExecStart."""
    settings = unit("messaging-web.service")
    for command in settings.get("ExecStartPre", []):
        command = command.replace(METRICS_DIR, env["PROMETHEUS_MULTIPROC_DIR"])
        subprocess.run(shlex.split(command.lstrip("-")), check=True, env=env, cwd=ROOT)
    [start] = settings["ExecStart"]
    start = start.replace(f"{INSTALLED_AT}/.venv/bin/", f"{BIN}/")
    return subprocess.Popen(
        shlex.split(start), cwd=ROOT, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT
    )


@pytest.mark.slow
def test_a_web_restart_keeps_the_running_workers_counters(tmp_path, migrated_database_in):
    port = free_port()
    metrics = tmp_path / "metrics"
    metrics.mkdir()  # systemd's RuntimeDirectory
    with FakeCloudApi() as graph:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("DATABASE_")},
            "VAR_DIR": str(tmp_path),
            "SECRET_KEY": "restart-test",
            "REDIS_URL": "",
            "WHATSAPP_GRAPH_URL": graph.url,
            "METRICS_TOKEN": "metrics-token",
            "PROMETHEUS_MULTIPROC_DIR": str(metrics),
            "PORT": str(port),
            "WORKERS": "2",
            "THREADS": "2",
            "TASK_WORKER_THREADS": "2",
        }
        migrated_database_in(tmp_path)
        organization = shop(env)
        log = tmp_path / "processes.log"
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "db_worker"],
            cwd=ROOT,
            env=env,
            stdout=log.open("a"),
            stderr=subprocess.STDOUT,
        )
        web = start_web(env, log)

        def customer_asks(wam_id: str) -> None:
            body = json.dumps(envelope(text_message("hours?", wam_id=wam_id))).encode()
            response = requests.post(
                f"http://127.0.0.1:{port}/webhooks/whatsapp/{organization}",
                data=body,
                headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)},
                timeout=30,
            )
            assert response.status_code == 200

        try:
            assert wait_until_listening(port, timeout=60, process=web), log.read_text()
            customer_asks("wamid.FIRST")
            wait_until(lambda: len(graph.requests) == 1, what="the worker's first reply")
            wait_until(lambda: scraped_sends(port) == 1, what="the worker's send counted")

            web.send_signal(signal.SIGTERM)  # systemctl restart messaging-web
            assert web.wait(timeout=60) == 0
            web = start_web(env, log)
            assert wait_until_listening(port, timeout=60, process=web), log.read_text()

            assert worker.poll() is None
            assert scraped_sends(port) == 1  # the worker's count survived the restart
            customer_asks("wamid.SECOND")
            wait_until(lambda: len(graph.requests) == 2, what="the worker's second reply")
            wait_until(lambda: scraped_sends(port) == 2, what="the second send counted")
        finally:
            for process in (web, worker):
                process.send_signal(signal.SIGTERM)
            codes = [process.wait(timeout=60) for process in (web, worker)]
    assert codes == [0, 0], log.read_text()[-3000:]
