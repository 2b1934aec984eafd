"""Inbound media: recorded with the chat, fetched by a task from the loopback Cloud API
stand-in (Graph's media look-up, then the download with the organization's token), kept
in Django's storage and served by GET /api/chats/{uuid}/media to its organization only."""

import base64
import hashlib
import itertools
import json
import time

import pytest

from sending.models import Chat, ChatMedia
from tests.background import make_due, run_tasks, tasks
from tests.channel import ACCESS_TOKEN, PHONE_NUMBER_ID, set_channel
from tests.inbound.conftest import deliver, envelope

FETCH = "inbound.media.fetch_media"
PHOTO = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 40  # 10 KiB "jpeg"
_ids = itertools.count(1)


def media_message(
    kind: str = "image",
    media_id: str = "1037543291543636",
    *,
    sha256: str | None = None,
    mime_type: str = "image/jpeg",
    sender: str = "14155552671",
    **extra,
) -> dict:
    """An inbound media message as the Cloud API's webhook carries it."""
    content = {"mime_type": mime_type, "id": media_id, **extra}
    if sha256 is not None:
        content["sha256"] = sha256
    return {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_NUMBER_ID},
        "contacts": [{"profile": {"name": "Ada"}, "wa_id": sender}],
        "messages": [
            {
                "from": sender,
                "id": f"wamid.MEDIA{next(_ids):010d}",
                "timestamp": "1700000000",
                "type": kind,
                kind: content,
            }
        ],
    }


def receive(org, **kwargs) -> Chat:
    response = deliver(org, envelope(media_message(**kwargs)))
    assert response.status_code == 200
    return Chat.objects.filter(type="inbound").latest("id")


def record(api, chat) -> dict:
    return api.get(f"/api/chats/{chat.uuid}").json()["data"]


def media_requests(graph) -> list:
    return [r for r in graph.requests if r.method == "GET"]


def test_an_image_is_fetched_after_the_webhook_answers_and_served_to_its_organization(
    cloud_webhook_org, graph, api
):
    graph.add_media("1037543291543636", PHOTO, token=ACCESS_TOKEN)

    chat = receive(cloud_webhook_org)

    assert media_requests(graph) == []  # the 200 came before any download
    assert record(api, chat)["media"] == {
        "type": "image",
        "status": "pending",
        "mime_type": "image/jpeg",
        "file_name": None,
        "file_size": None,
    }
    assert api.get(f"/api/chats/{chat.uuid}/media").status_code == 404  # not fetched yet
    assert [t.status for t in tasks(FETCH)] == ["READY"]

    run_tasks()

    lookup, download = media_requests(graph)
    assert lookup.path == f"/v21.0/1037543291543636?phone_number_id={PHONE_NUMBER_ID}"
    assert lookup.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert download.path == "/media-download/1037543291543636"
    assert download.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    data = record(api, chat)
    assert data["media"]["status"] == "available"
    assert data["media"]["file_size"] == len(PHOTO)
    assert data["media_id"] == ChatMedia.objects.get().pk

    response = api.get(f"/api/chats/{chat.uuid}/media")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == PHOTO
    assert response["Content-Type"] == "image/jpeg"
    assert response["Content-Disposition"] == f'attachment; filename="image-{chat.uuid}.jpg"'
    # As docs/media.md promises: the API's default (`no-cache, private`) does not replace it.
    assert response["Cache-Control"] == "private, no-store"
    assert api.get(f"/api/chats/{chat.uuid}")["Cache-Control"] == "no-cache, private"


def test_the_file_is_kept_in_djangos_storage_under_the_organization(
    cloud_webhook_org, graph, media_root
):
    graph.add_media("1037543291543636", PHOTO, token=ACCESS_TOKEN)
    receive(cloud_webhook_org)
    run_tasks()

    media = ChatMedia.objects.get()
    assert media.file.name.startswith(f"media/{cloud_webhook_org.uuid}/image-")
    assert (media_root / media.file.name).read_bytes() == PHOTO


def test_another_organizations_token_gets_a_404(cloud_webhook_org, graph, api_b):
    graph.add_media("1037543291543636", PHOTO, token=ACCESS_TOKEN)
    chat = receive(cloud_webhook_org)
    run_tasks()

    response = api_b.get(f"/api/chats/{chat.uuid}/media")
    assert response.status_code == 404
    assert response.json() == {"statusCode": 404, "message": "Not found."}
    assert api_b.get("/api/chats/not-a-uuid/media").status_code == 404


def test_a_chat_without_media_has_none(cloud_webhook_org, api):
    from tests.inbound.conftest import text_message

    deliver(cloud_webhook_org, envelope(text_message("hello")))
    chat = Chat.objects.get()

    assert record(api, chat)["media"] is None
    assert api.get(f"/api/chats/{chat.uuid}/media").status_code == 404
    assert not tasks(FETCH).exists()


def test_a_client_asking_for_the_files_type_gets_it(cloud_webhook_org, graph, api):
    graph.add_media("1037543291543636", PHOTO, token=ACCESS_TOKEN)
    chat = receive(cloud_webhook_org)
    run_tasks()

    response = api.get(f"/api/chats/{chat.uuid}/media", HTTP_ACCEPT="image/jpeg")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == PHOTO


def test_a_document_is_offered_under_its_own_name(cloud_webhook_org, graph, api):
    pdf = b"%PDF-1.7 invoice"
    graph.add_media("555", pdf, token=ACCESS_TOKEN, mime_type="application/pdf")

    chat = receive(
        cloud_webhook_org,
        kind="document",
        media_id="555",
        mime_type="application/pdf",
        filename="../Invoice 42.pdf",
        caption="my invoice",
    )
    run_tasks()

    response = api.get(f"/api/chats/{chat.uuid}/media")
    assert b"".join(response.streaming_content) == pdf
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="_Invoice 42.pdf"'
    assert record(api, chat)["media"]["file_name"] == "../Invoice 42.pdf"


@pytest.mark.parametrize("kind", ["audio", "voice", "video", "sticker"])
def test_every_media_kind_is_fetched(cloud_webhook_org, graph, api, kind):
    mime = {"audio": "audio/ogg", "voice": "audio/ogg", "video": "video/mp4"}.get(
        kind, "image/webp"
    )
    graph.add_media("777", b"media bytes", token=ACCESS_TOKEN, mime_type=mime)

    chat = receive(cloud_webhook_org, kind=kind, media_id="777", mime_type=mime)
    run_tasks()

    media = record(api, chat)["media"]
    assert media["status"] == "available"
    assert media["type"] == ("audio" if kind == "voice" else kind)
    assert b"".join(api.get(f"/api/chats/{chat.uuid}/media").streaming_content) == b"media bytes"


def test_the_sha256_of_the_webhook_is_checked_in_base64_or_hex(cloud_webhook_org, graph, api):
    digest = hashlib.sha256(PHOTO).digest()
    graph.add_media("1", PHOTO, token=ACCESS_TOKEN)
    graph.add_media("2", PHOTO, token=ACCESS_TOKEN)
    good = receive(cloud_webhook_org, media_id="1", sha256=base64.b64encode(digest).decode())
    bad = receive(cloud_webhook_org, media_id="2", sha256=hashlib.sha256(b"other").hexdigest())

    run_tasks()

    assert record(api, good)["media"]["status"] == "available"
    assert ChatMedia.objects.get(media_id="2").state == "retrying"
    assert record(api, bad)["media"]["status"] == "pending"


def test_a_wrong_sha256_is_retried_then_recorded_as_failed(
    cloud_webhook_org, graph, api, settings, media_root
):
    settings.TASK_MAX_ATTEMPTS = 3
    graph.add_media("1", PHOTO, token=ACCESS_TOKEN, sha256=hashlib.sha256(b"x").hexdigest())
    chat = receive(cloud_webhook_org, media_id="1")

    run_tasks()
    media = ChatMedia.objects.get()
    assert (media.state, media.attempts) == ("retrying", 1)
    for _ in range(2):
        make_due()
        run_tasks()

    media.refresh_from_db()
    assert (media.state, media.attempts) == ("failed", 3)
    assert "sha256" in media.last_error
    assert record(api, chat)["media"]["status"] == "failed"
    assert api.get(f"/api/chats/{chat.uuid}/media").status_code == 404
    assert not list(media_root.rglob("*.jpg"))  # nothing kept of a file that did not match


def test_a_file_over_the_cap_is_failed_without_downloading(cloud_webhook_org, graph, api):
    # A sticker's limit is 500 KB; Graph announces the size before anything is read.
    graph.add_media("1", b"x" * (500 * 1024 + 1), token=ACCESS_TOKEN, mime_type="image/webp")
    chat = receive(cloud_webhook_org, kind="sticker", media_id="1", mime_type="image/webp")

    run_tasks()

    media = ChatMedia.objects.get()
    assert (media.state, media.attempts) == ("failed", 1)  # not retried: it stays too large
    assert "limit" in media.last_error
    assert [r.path.split("?")[0] for r in media_requests(graph)] == ["/v21.0/1"]
    assert record(api, chat)["media"]["status"] == "failed"


def test_a_file_larger_than_graph_said_is_cut_off_at_the_cap(cloud_webhook_org, graph, media_root):
    graph.add_media(
        "1", b"x" * (500 * 1024 + 1), token=ACCESS_TOKEN, mime_type="image/webp", file_size=10
    )
    receive(cloud_webhook_org, kind="sticker", media_id="1", mime_type="image/webp")

    run_tasks()

    assert ChatMedia.objects.get().state == "failed"
    assert not [p for p in media_root.rglob("*") if p.is_file()]


def test_media_graph_does_not_know_is_failed_at_once(cloud_webhook_org, graph, api):
    graph.add_media("1", PHOTO, token=ACCESS_TOKEN, missing=True)
    chat = receive(cloud_webhook_org, media_id="1")

    run_tasks()

    media = ChatMedia.objects.get()
    assert (media.state, media.attempts) == ("failed", 1)
    assert "code 100" in media.last_error and "HTTP 404" in media.last_error
    assert record(api, chat)["media"]["status"] == "failed"


def test_an_expired_download_url_is_retried_with_a_new_one(cloud_webhook_org, graph, api):
    stored = graph.add_media("1", PHOTO, token=ACCESS_TOKEN, expired=True)
    chat = receive(cloud_webhook_org, media_id="1")

    run_tasks()
    media = ChatMedia.objects.get()
    assert media.state == "retrying"
    assert "HTTP 404" in media.last_error

    stored.expired = False  # the next look-up gives a fresh URL
    make_due()
    run_tasks()

    assert record(api, chat)["media"]["status"] == "available"
    assert len([r for r in media_requests(graph) if r.path.startswith("/v21.0/1")]) == 2


def test_the_download_carries_the_organizations_token(cloud_webhook_org, graph):
    # The channel knows another token: Graph answers 401, which no retry can fix.
    graph.add_media("1", PHOTO, token="someone-elses-token")
    receive(cloud_webhook_org, media_id="1")

    run_tasks()

    media = ChatMedia.objects.get()
    assert (media.state, media.attempts) == ("failed", 1)
    assert media.last_error.startswith("credentials")


def test_a_channel_that_is_down_is_retried(cloud_webhook_org, graph, settings):
    settings.TASK_MAX_ATTEMPTS = 2
    graph.add_media("1", PHOTO, token=ACCESS_TOKEN)
    graph.reply(503, {"error": {"message": "Service temporarily unavailable", "code": 2}})
    receive(cloud_webhook_org, media_id="1")

    run_tasks()
    assert ChatMedia.objects.get().state == "retrying"
    make_due()
    run_tasks()
    assert ChatMedia.objects.get().state == "available"


def test_a_download_dripping_a_byte_a_second_is_cut_off_and_retried(
    cloud_webhook_org, graph, settings, media_root
):
    settings.MEDIA_DOWNLOAD_TIMEOUT = 1
    graph.add_media("1", PHOTO, token=ACCESS_TOKEN, drip=0.5)
    receive(cloud_webhook_org, media_id="1")

    started = time.monotonic()
    run_tasks()

    assert time.monotonic() - started < 5
    media = ChatMedia.objects.get()
    assert (media.state, media.attempts) == ("retrying", 1)
    assert media.last_error.startswith("timeout")
    assert not [p for p in media_root.rglob("*") if p.is_file()]


def test_a_redelivered_webhook_fetches_once(cloud_webhook_org, graph):
    graph.add_media("1", PHOTO, token=ACCESS_TOKEN)
    payload = envelope(media_message(media_id="1"))

    deliver(cloud_webhook_org, payload)
    deliver(cloud_webhook_org, payload)

    assert ChatMedia.objects.count() == 1
    assert tasks(FETCH).count() == 1


def test_a_task_run_twice_keeps_one_file(cloud_webhook_org, graph, media_root):
    from inbound.media import fetch_media

    graph.add_media("1", PHOTO, token=ACCESS_TOKEN)
    receive(cloud_webhook_org, media_id="1")
    media = ChatMedia.objects.get()

    assert fetch_media.call(media.pk) == "available"
    assert fetch_media.call(media.pk) == "available"  # already done: nothing fetched again
    assert len([p for p in media_root.rglob("*") if p.is_file()]) == 1
    assert len(media_requests(graph)) == 2


def test_media_without_a_usable_id_is_recorded_without_a_fetch(cloud_webhook_org, api):
    chat = receive(cloud_webhook_org, media_id="../../etc/passwd")

    assert json.loads(record(api, chat)["metadata"])["type"] == "image"
    assert record(api, chat)["media"] is None
    assert not tasks(FETCH).exists()


def test_a_sandbox_organization_without_the_file_fails_the_fetch(org_a):
    from tests.inbound.conftest import APP_SECRET

    set_channel(org_a, app_secret=APP_SECRET)
    receive(org_a, media_id="1")

    run_tasks()
    assert ChatMedia.objects.get().state == "failed"


def test_the_chat_list_costs_the_same_queries_with_media(
    cloud_webhook_org, graph, api, django_assert_num_queries
):
    graph.add_media("1", PHOTO, token=ACCESS_TOKEN)
    for _ in range(3):
        receive(cloud_webhook_org, media_id="1")
    run_tasks()
    api.get("/api/chats")  # warm: the token's cached look-up

    with django_assert_num_queries(2):  # the count, the page (contacts and media joined)
        response = api.get("/api/chats")
    assert [c["media"]["status"] for c in response.json()["data"]] == ["available"] * 3
