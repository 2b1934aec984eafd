"""Property (hypothesis): whatever a signed delivery holds, in whichever field, the answer
is a 200 that accounts for every item, and what is stored is what PostgreSQL can store.

Generated text includes NUL, lone surrogates and every other code point; generated JSON
includes non-finite numbers, deep nesting and wrong types, in place of any field. On
SQLite, which would store all of it, the stored rows are checked against PostgreSQL's
rules, so both databases are held to one behaviour.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from business_numbers.gateway.cloud_api import is_message_id
from contacts.models import Contact
from messaging_project.core.storable import is_storable_json, is_storable_text
from sending.models import Chat, ChatStatusEvent
from tests.inbound.conftest import deliver, envelope

pytestmark = pytest.mark.django_db

PROPERTY_SETTINGS = settings(
    max_examples=100,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


def deep(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def either(good: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly a plausible value, sometimes anything at all."""
    return st.one_of(good, good, json_values, st.integers(40, 200).map(deep))


message_ids = st.from_regex(r"\Awamid\.[A-Za-z0-9]{1,12}\Z") | st.text(max_size=300)
senders = st.sampled_from(["14155552671", "4915112345678"]) | st.text(max_size=20)


@st.composite
def messages(draw) -> dict:
    kind = draw(either(st.sampled_from(["text", "interactive", "button", "image", "reaction"])))
    text = draw(st.text(max_size=30))
    item = {
        "from": draw(either(senders)),
        "id": draw(either(message_ids)),
        "timestamp": "1700000000",
        "type": kind,
        "text": {"body": draw(either(st.just(text)))},
        "interactive": {"type": "button_reply", "button_reply": {"id": "b", "title": text}},
        "button": {"text": text, "payload": draw(json_values)},
        "image": draw(either(st.fixed_dictionaries({"id": st.text(max_size=10)}))),
        "reaction": draw(json_values),
    }
    missing = draw(st.sets(st.sampled_from(sorted(item)), max_size=2))
    return {key: value for key, value in item.items() if key not in missing}


@st.composite
def statuses(draw) -> dict:
    error = {
        "code": draw(either(st.integers(0, 200000))),
        "title": draw(either(st.text(max_size=30))),
        "error_data": {"details": draw(either(st.text(max_size=30)))},
    }
    return {
        "id": draw(either(message_ids)),
        "status": draw(either(st.sampled_from(["sent", "delivered", "read", "failed"]))),
        "timestamp": draw(either(st.integers(0, 2_000_000_000).map(str))),
        "errors": draw(either(st.just([error]))),
    }


contacts = st.lists(
    st.fixed_dictionaries(
        {"wa_id": either(senders), "profile": either(st.fixed_dictionaries({"name": st.text()}))}
    ),
    max_size=2,
)


@PROPERTY_SETTINGS
@given(
    message_items=st.lists(messages(), max_size=3),
    status_items=st.lists(statuses(), max_size=3),
    profiles=contacts,
)
def test_any_delivery_is_a_200_that_counts_every_item_and_stores_only_storable_rows(
    webhook_org, message_items, status_items, profiles
):
    value = {"contacts": profiles, "messages": message_items, "statuses": status_items}

    response = deliver(webhook_org, envelope(value))

    assert response.status_code == 200, response.content
    processed = response.json()["processed"]
    assert sum(processed.values()) == len(message_items) + len(status_items)
    for chat in Chat.objects.filter(organization=webhook_org):
        assert is_message_id(chat.wam_id)
        assert is_storable_json(chat.metadata)
    for event in ChatStatusEvent.objects.filter(organization=webhook_org):
        assert is_message_id(event.wam_id) and is_storable_text(event.error_title)
        assert event.error_details is None or is_storable_json(event.error_details)
    for contact in Contact.objects.filter(organization=webhook_org):
        assert contact.first_name is None or is_storable_text(contact.first_name)
