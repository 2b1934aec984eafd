"""Staff's figures: conversations assigned and resolved, messages sent from the inbox,
and the median time from a customer's message that opened or reopened a conversation to
the staff member's first answer in it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from inbox import services
from sending.models import ConversationStatus
from tests.inbox.conftest import conversation_of, writes

pytestmark = pytest.mark.django_db

OTHER = "14155550002"


def figures(api) -> dict:
    day = timezone.now().date().isoformat()
    response = api.get(f"/api/analytics/agents?from={day}&to={day}")
    assert response.status_code == 200, response.content
    return {row["username"]: row for row in response.json()["data"]}


def later(monkeypatch, seconds: int) -> None:
    moment = timezone.now() + timedelta(seconds=seconds)
    monkeypatch.setattr(timezone, "now", lambda: moment)


def test_first_responses_assignments_and_sends(api, inbox_org, agent, manager, graph, monkeypatch):
    writes(inbox_org)  # opens a conversation
    writes(inbox_org, sender=OTHER)
    first = conversation_of(inbox_org)
    services.update_conversation(conversation=first, actor=agent, assignee=agent)
    later(monkeypatch, 60)
    services.send_in_conversation(conversation=first, actor=agent, message="On it")
    later(monkeypatch, 60)
    services.send_in_conversation(conversation=first, actor=agent, message="Done")  # not first
    writes(inbox_org)  # still open: no new clock
    second = conversation_of(inbox_org, OTHER)
    later(monkeypatch, 200)
    services.send_in_conversation(conversation=second, actor=agent, message="Hello")
    services.update_conversation(
        conversation=conversation_of(inbox_org), actor=agent, status=ConversationStatus.RESOLVED
    )
    later(monkeypatch, 10)
    writes(inbox_org)  # reopens
    later(monkeypatch, 30)
    services.send_in_conversation(
        conversation=conversation_of(inbox_org), actor=manager, message="Hi"
    )

    found = figures(api)
    assert found["ada"] == {
        "username": "ada",
        "conversations_assigned": 1,
        "conversations_resolved": 0,  # reopened since
        "messages_sent": 3,
        "median_first_response_seconds": 190.0,  # of 60 and 320
    }
    assert found["mia"]["messages_sent"] == 1
    assert found["mia"]["median_first_response_seconds"] == 30.0


def test_nobody_answered_yet(api, inbox_org, agent):
    writes(inbox_org)
    services.update_conversation(
        conversation=conversation_of(inbox_org), actor=agent, assignee=agent
    )
    services.update_conversation(
        conversation=conversation_of(inbox_org), actor=agent, status=ConversationStatus.RESOLVED
    )
    assert figures(api)["ada"] == {
        "username": "ada",
        "conversations_assigned": 1,
        "conversations_resolved": 1,
        "messages_sent": 0,
        "median_first_response_seconds": None,
    }


def test_a_bad_range_is_a_400(api, inbox_org):
    response = api.get("/api/analytics/agents?from=2026-01-02&to=2026-01-01")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["to"]
