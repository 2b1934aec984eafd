"""The upgrade that moved the marks of the chats waiting for the figures' fold from a
partial index on the chats to their own table (sending 0024): a chat marked before it is
marked after, and the trigger marks the chats moved from then on."""

import pytest

from analytics import folding
from sending.models import Chat, MovedChat
from tests.analytics.conftest import send, totals
from tests.databases import migrate
from tests.inbound.conftest import deliver, envelope, status, statuses

BEFORE = [("sending", "0023_chat_counted_status")]


@pytest.mark.migrates
@pytest.mark.django_db(transaction=True)
def test_the_chats_marked_before_stay_marked_and_the_next_are_marked(webhook_org):
    send(webhook_org, wam_id="wamid.U1")
    deliver(webhook_org, envelope(statuses(status("wamid.U1", "sent", 100))))
    waiting = Chat.objects.get(wam_id="wamid.U1")
    migrate(BEFORE)
    try:
        assert Chat.objects.filter(pk=waiting.pk, counted_status__isnull=False).exists()
    finally:
        migrate(None)

    assert list(MovedChat.objects.values_list("chat_id", "organization_id")) == [
        (waiting.pk, webhook_org.pk)
    ]
    send(webhook_org, wam_id="wamid.U2")
    deliver(webhook_org, envelope(statuses(status("wamid.U2", "delivered", 100))))
    moved = Chat.objects.get(wam_id="wamid.U2")
    assert sorted(MovedChat.objects.values_list("chat_id", flat=True)) == [waiting.pk, moved.pk]
    assert folding.fold_moves(None) == 2
    assert (totals(webhook_org)["sent"], totals(webhook_org)["delivered"]) == (2, 1)
    assert not MovedChat.objects.exists()
