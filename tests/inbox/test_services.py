"""The inbox's services and selectors as the admin calls them, with a staff member:
an agent's share of the conversations, the tabs, and who sent a message."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from inbox import selectors, services
from inbox.selectors import Tab
from sending.models import Chat, ConversationStatus
from sending.services import ServiceWindowClosed
from tests.inbox.conftest import CUSTOMER, conversation_of, writes

pytestmark = pytest.mark.django_db

OTHER, THIRD = "4915199999999", "4915188888888"


@pytest.fixture
def three(inbox_org, agent, other_agent):
    """Three conversations: the agent's, the other agent's, and one unassigned."""
    for phone in (CUSTOMER, OTHER, THIRD):
        writes(inbox_org, sender=phone)
    services.update_conversation(conversation=conversation_of(inbox_org), assignee=agent)
    services.update_conversation(
        conversation=conversation_of(inbox_org, OTHER), assignee=other_agent
    )
    return inbox_org


def phones(conversations) -> set[str]:
    return {c.contact.phone for c in conversations}


def test_an_agent_sees_the_unassigned_and_their_own(three, agent, manager):
    assert phones(selectors.conversations_for(organization=three, user=agent)) == {
        CUSTOMER,
        THIRD,
    }
    assert len(selectors.conversations_for(organization=three, user=manager)) == 3
    assert len(selectors.conversations_for(organization=three)) == 3  # the API


def test_the_tabs(three, agent, manager):
    services.update_conversation(
        conversation=conversation_of(three, THIRD), status=ConversationStatus.RESOLVED
    )

    def tab(user, name):
        return phones(selectors.conversations_for(organization=three, user=user, tab=name))

    assert tab(agent, Tab.MINE) == {CUSTOMER}
    assert tab(agent, Tab.UNASSIGNED) == set()
    assert tab(agent, Tab.RESOLVED) == {THIRD}
    assert tab(manager, Tab.ALL) == {CUSTOMER, OTHER}
    assert tab(manager, Tab.MINE) == set()


def test_an_agent_may_not_act_on_another_agents_conversation(three, agent):
    theirs = conversation_of(three, OTHER)

    with pytest.raises(PermissionDenied):
        services.update_conversation(conversation=theirs, actor=agent, status="resolved")
    with pytest.raises(PermissionDenied):
        services.add_note(conversation=theirs, author=agent, body="mine now")
    with pytest.raises(PermissionDenied):
        services.send_in_conversation(conversation=theirs, actor=agent, message="hi")
    assert conversation_of(three, OTHER).status == "open"


def test_an_agent_takes_an_unassigned_conversation(three, agent):
    taken = services.update_conversation(
        conversation=conversation_of(three, THIRD), actor=agent, assignee=agent
    )

    assert taken.assignee == agent


def test_the_staff_member_who_sent_is_recorded(three, agent, graph):
    result = services.send_in_conversation(
        conversation=conversation_of(three), actor=agent, message="On it"
    )

    assert Chat.objects.get(pk=result.chat.pk).created_by == agent.pk


def test_the_window_is_kept_whatever_the_organizations_setting(inbox_org, graph):
    writes(inbox_org, at=1_700_000_000)  # long ago

    with pytest.raises(ServiceWindowClosed):
        services.send_in_conversation(conversation=conversation_of(inbox_org), message="Hi")
    assert graph.requests == []


def test_an_assignee_must_be_given_as_a_user(three):
    with pytest.raises(ValidationError) as refused:
        services.update_conversation(conversation=conversation_of(three), assignee="ada")
    assert "assignee" in refused.value.message_dict


def test_notes_have_their_author(three, agent):
    note = services.add_note(conversation=conversation_of(three), author=agent, body="Hi team")

    assert [n.author for n in selectors.notes_of(conversation_of(three))] == [agent]
    assert note.body == "Hi team"
