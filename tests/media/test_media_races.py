"""Where two workers or two deliveries meet (PostgreSQL): one media row per message, and
one stored file however many runs of its fetch task overlap."""

import pytest

from inbound.media import fetch_media
from sending.models import ChatMedia
from tests.channel import ACCESS_TOKEN
from tests.contacts.test_contact_counter import run_concurrently
from tests.databases import on_postgresql
from tests.inbound.conftest import deliver, envelope
from tests.media.test_inbound_media import PHOTO, media_message


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_runs_of_one_fetch_keep_one_file(cloud_webhook_org, graph, media_root):
    graph.add_media("1", PHOTO, token=ACCESS_TOKEN)
    deliver(cloud_webhook_org, envelope(media_message(media_id="1")))
    media = ChatMedia.objects.get()

    outcomes = run_concurrently([lambda: fetch_media.call(media.pk)] * 4)

    assert "available" in outcomes
    assert set(outcomes) <= {"available", "superseded"}
    media.refresh_from_db()
    assert media.state == "available"
    files = [p for p in media_root.rglob("*") if p.is_file()]
    assert [p.relative_to(media_root).as_posix() for p in files] == [media.file.name]
    assert files[0].read_bytes() == PHOTO


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_deliveries_of_one_media_message_record_it_once(cloud_webhook_org):
    payload = envelope(media_message(media_id="1"))

    statuses = run_concurrently([lambda: deliver(cloud_webhook_org, payload).status_code] * 4)

    assert statuses == [200] * 4
    assert ChatMedia.objects.count() == 1
