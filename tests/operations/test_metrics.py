"""/metrics: Prometheus text behind METRICS_TOKEN, with django-prometheus's request and
database metrics and the service's own counters, which move when the service acts."""

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from io import StringIO
from pathlib import Path

import pytest
import requests
from django.core.management import call_command
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from devtools.cloud_api_server import graph_error
from devtools.loopback import free_port, wait_until_listening
from tests.channel import set_channel
from tests.inbound.conftest import deliver, envelope, text_message

TOKEN = "metrics-token-for-tests"


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN


def scrape(token=TOKEN):
    return Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")


def samples(text: str) -> dict:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(name, **labels) -> float:
    return samples(scrape().content.decode()).get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.mark.django_db
def test_metrics_are_a_404_while_no_token_is_configured(settings):
    settings.METRICS_TOKEN = ""
    assert scrape("anything").status_code == 404
    assert Client().get("/metrics").status_code == 404


@pytest.mark.django_db
def test_a_missing_or_wrong_token_is_a_401(metrics_on):
    assert Client().get("/metrics").status_code == 401
    response = scrape("wrong")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 401


@pytest.mark.django_db
def test_wrong_token_guesses_count_toward_the_failed_authentication_limit(metrics_on, settings):
    settings.API_AUTH_FAILURE_LIMIT = 3
    assert [scrape(f"guess-{n}").status_code for n in range(4)] == [401, 401, 401, 429]
    blocked = scrape()  # even the right token, from that address, until the window ends
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) >= 1
    # The same budget as the API's tokens: a bad API token is refused as well.
    api = Client().get("/api/contacts", HTTP_AUTHORIZATION="Bearer wam_guess")
    assert api.status_code == 429


@pytest.mark.django_db
def test_the_scrape_has_request_database_and_queue_metrics(metrics_on, api):
    api.get("/api/contacts")
    response = scrape()
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    names = {name for name, _ in samples(response.content.decode())}
    assert "django_http_requests_total_by_method_total" in names
    assert "django_db_execute_total" in names
    assert {"task_queue_depth", "task_queue_oldest_wait_seconds"} <= names
    assert TOKEN not in response.content.decode()


@pytest.mark.django_db
def test_sends_are_counted_by_result_and_status_code(metrics_on, api, cloud_org, graph):
    accepted = value("whatsapp_sends_total", result="accepted", status_code="200")
    refused = value("whatsapp_sends_total", result="refused", status_code="400")
    assert (
        api.post("/api/send", {"phone": "+14155552671", "message": "hi"}, format="json").status_code
        == 200
    )
    graph.reply(400, graph_error(131047, "Re-engagement message"))
    assert (
        api.post("/api/send", {"phone": "+14155552671", "message": "hi"}, format="json").status_code
        == 422
    )
    assert value("whatsapp_sends_total", result="accepted", status_code="200") == accepted + 1
    assert value("whatsapp_sends_total", result="refused", status_code="400") == refused + 1


@pytest.mark.django_db
def test_inbound_messages_and_webhook_deliveries_are_counted(
    metrics_on, org_a, django_capture_on_commit_callbacks
):
    set_channel(org_a, app_secret="app-secret-for-tests")
    processed = value("whatsapp_webhook_deliveries_total", result="processed")
    unsigned = value("whatsapp_webhook_deliveries_total", result="bad_signature")
    inbound = value("whatsapp_inbound_messages_total")
    payload = envelope(
        text_message("hello", wam_id="wamid.A"), text_message("hi", wam_id="wamid.B")
    )
    with django_capture_on_commit_callbacks(execute=True):  # counted once committed
        assert deliver(org_a, payload).status_code == 200
        assert deliver(org_a, payload, signature="sha256=00").status_code == 401
        assert deliver(org_a, payload).status_code == 200  # the same again: no new message
    assert value("whatsapp_webhook_deliveries_total", result="processed") == processed + 2
    assert value("whatsapp_webhook_deliveries_total", result="bad_signature") == unsigned + 1
    assert value("whatsapp_inbound_messages_total") == inbound + 2


@pytest.mark.django_db
def test_simulate_inbound_is_counted_like_the_webhook(
    metrics_on, org_a, django_capture_on_commit_callbacks
):
    inbound = value("whatsapp_inbound_messages_total")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("simulate_inbound", org_a.name, "+14155552671", "Hello!", stdout=StringIO())
    assert value("whatsapp_inbound_messages_total") == inbound + 1


@pytest.mark.django_db
def test_rate_limit_refusals_are_counted(metrics_on, settings, org_a, api):
    org_a.rate_limit = 1
    org_a.save()
    before = value("rate_limit_refusals_total", limit="organization")
    assert [api.get("/api/me").status_code for _ in range(3)] == [200, 429, 429]
    assert value("rate_limit_refusals_total", limit="organization") == before + 2


@pytest.mark.django_db(transaction=True)
def test_the_queue_depth_is_read_from_the_database(metrics_on):
    from inbound.auto_replies import send_auto_reply

    assert value("task_queue_depth") == 0
    send_auto_reply.enqueue(0)
    send_auto_reply.enqueue(0)
    assert value("task_queue_depth") == 2


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # gunicorn with two workers
def test_counts_add_up_across_gunicorn_workers(tmp_path, migrated_database_in):
    multiproc = tmp_path / "metrics"
    multiproc.mkdir()
    env = {
        **os.environ,
        "VAR_DIR": str(tmp_path),
        "DATABASE_URL": "",
        "REDIS_URL": "",
        "SECRET_KEY": "test",
        "METRICS_TOKEN": TOKEN,
        "PROMETHEUS_MULTIPROC_DIR": str(multiproc),
    }
    migrated_database_in(tmp_path)
    port = free_port()
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "messaging_project.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--no-control-socket",
            "--workers",
            "2",
            "--reuse-port",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    requests_sent = 40
    try:
        assert wait_until_listening(port, timeout=30, process=server), "gunicorn did not start"
        time.sleep(1)  # both workers up

        def live(_):
            session = requests.Session()
            session.trust_env = False  # a fresh connection each: spread over the workers
            return session.get(f"http://127.0.0.1:{port}/health/live", timeout=10).status_code

        with ThreadPoolExecutor(8) as pool:
            assert set(pool.map(live, range(requests_sent))) == {200}
        counted = set()
        for _ in range(6):  # whichever worker answers the scrape sees every worker's count
            session = requests.Session()
            session.trust_env = False
            text = session.get(
                f"http://127.0.0.1:{port}/metrics",
                headers={"Authorization": f"Bearer {TOKEN}"},
                timeout=10,
            ).text
            counted.add(
                sum(
                    sample.value
                    for family in text_string_to_metric_families(text)
                    for sample in family.samples
                    if sample.name == "django_http_responses_total_by_status_view_method_total"
                    and sample.labels.get("view") == "health-live"
                )
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert counted == {requests_sent}
    # The two workers each wrote their own file: the sum really spans processes.
    assert len(list(multiproc.glob("counter_*.db"))) >= 2


@pytest.mark.django_db
def test_event_webhook_deliveries_are_counted_by_result(metrics_on, settings, api, org_a):
    from devtools.webhook_receiver import WebhookReceiver
    from events.services import create_endpoint
    from tests.background import make_due, run_tasks

    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_RETRY_SCHEDULE = [1]
    before = {
        result: value("event_webhook_deliveries_total", result=result)
        for result in ("succeeded", "retrying", "failed")
    }
    with WebhookReceiver() as receiver:
        create_endpoint(organization=org_a, url=receiver.url)
        receiver.fail_next(500)  # the first event: refused once, then delivered
        api.post("/api/contacts", {"phone": "+14155552671", "first_name": "Ada"}, format="json")
        run_tasks()
        make_due()
        run_tasks()
        receiver.status = 500  # the second: refused twice, then failed for good
        api.post("/api/contacts", {"phone": "+14155552672", "first_name": "Bo"}, format="json")
        run_tasks()
        make_due()
        run_tasks()
    assert value("event_webhook_deliveries_total", result="succeeded") == before["succeeded"] + 1
    assert value("event_webhook_deliveries_total", result="retrying") == before["retrying"] + 2
    assert value("event_webhook_deliveries_total", result="failed") == before["failed"] + 1
