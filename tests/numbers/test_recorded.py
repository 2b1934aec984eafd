"""sending.recorded: the apps above sending learn of every message in and out and of
every status, inside the transaction that recorded it (a listener's failure rolls the
record back with it)."""

import pytest
from django.db import connection

from sending import recorded
from sending.models import Chat
from tests.inbound.conftest import (
    deliver,
    envelope,
    status,
    statuses,
    text_message,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def heard(monkeypatch):
    """Every record announced, with whether a transaction was open when it was."""
    monkeypatch.setattr(
        recorded, "LISTENERS", {kind: list(them) for kind, them in recorded.LISTENERS.items()}
    )
    records = []
    for kind in (recorded.MessagesIn, recorded.MessagesOut, recorded.StatusesRecorded):
        recorded.listen(kind, lambda record: records.append((record, connection.in_atomic_block)))
    return records


def test_a_message_in_a_reply_out_and_a_status_are_each_heard_in_their_transaction(
    webhook_org, api, heard
):
    assert (
        deliver(webhook_org, envelope(text_message("hi", wam_id="wamid.HEARD"))).status_code == 200
    )
    sent = api.post("/api/send", {"phone": "+14155552671", "message": "Hello"})
    wam_id = sent.json()["data"]["data"]["messages"][0]["id"]
    deliver(webhook_org, envelope(statuses(status(wam_id, "delivered", 1_700_000_000))))

    kinds = [type(record).__name__ for record, _ in heard]
    assert kinds == ["MessagesIn", "MessagesOut", "StatusesRecorded"]
    assert all(in_transaction for _, in_transaction in heard)
    (message_in, _), (message_out, _), (status_update, _) = heard
    assert [chat.wam_id for chat in message_in.chats] == ["wamid.HEARD"]
    assert [chat.wam_id for chat in message_out.chats] == [wam_id]
    assert [update.status for update in status_update.updates] == ["delivered"]
    assert status_update.chats[wam_id].pk == Chat.objects.get(wam_id=wam_id).pk


def test_a_listener_that_fails_rolls_the_message_back(webhook_org, monkeypatch):
    monkeypatch.setattr(recorded, "LISTENERS", {})

    def broken(record):
        raise RuntimeError("listener failed")

    recorded.listen(recorded.MessagesIn, broken)
    with pytest.raises(RuntimeError):
        deliver(webhook_org, envelope(text_message("hi", wam_id="wamid.ROLLED")))
    assert not Chat.objects.filter(wam_id="wamid.ROLLED").exists()
