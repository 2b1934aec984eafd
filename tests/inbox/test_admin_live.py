"""The live check of open inbox pages (inbox/live.py): a 304 while nothing changed, a
200 when a message, a tick, a note or the conversation's state did; cheap (its queries
pinned, no session); and nothing for a token that is forged, expired or no longer
the user's to see."""

import logging
import re
import time
from datetime import timedelta

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from inbox import live, services
from inbox.middleware import LIVE_PATH
from sending.models import Chat, Conversation
from tests.admin.conftest import logged_in
from tests.factories import create_chat
from tests.inbound.conftest import deliver
from tests.inbox.admin_setup import (
    CUSTOMER,
    agent_of,
    customer_message,
    delivered,
    manager_of,
    webhook_body,
    with_webhook_secrets,
)


@pytest.fixture
def org(org_a):
    return with_webhook_secrets(org_a)


@pytest.fixture
def manager(org):
    return manager_of(org)


def customer_writes(organization, text: str = "Hello?") -> Conversation:
    assert deliver(organization, webhook_body(customer_message(text))).status_code == 200
    return Conversation.objects.get(organization=organization, contact__phone=CUSTOMER)


def live_of(client: Client, path: str) -> tuple[str, str]:
    """The live URL and ETag an inbox page carries."""
    text = client.get(path).content.decode()
    url = re.search(r'data-live-url="([^"]+)"', text).group(1)
    etag = re.search(r'data-live-etag="([^"]*)"', text).group(1).replace("&quot;", '"')
    return url, etag


def check(url: str, etag: str):
    return Client().get(url, HTTP_IF_NONE_MATCH=etag)


def test_nothing_changed_is_a_304_in_one_query_without_a_session(
    org, manager, django_assert_num_queries
):
    conversation = customer_writes(org)
    url, etag = live_of(logged_in(manager), f"/admin/inbox/{conversation.uuid}/")

    # The conversation's row (with its newest note) beside its latest messages' ticks.
    with django_assert_num_queries(1):
        response = check(url, etag)

    assert response.status_code == 304
    assert response["ETag"] == etag
    assert "Set-Cookie" not in response and "sessionid" not in response.cookies


def test_the_list_check_is_one_query(org, manager, django_assert_num_queries):
    customer_writes(org)
    url, etag = live_of(logged_in(manager), "/admin/inbox/")

    with django_assert_num_queries(1):
        assert check(url, etag).status_code == 304

    customer_writes(org, "Another question")
    assert check(url, etag).status_code == 200


@pytest.mark.parametrize(
    "change",
    ["a new message", "a tick", "a note", "an assignee", "labels", "the window closing"],
)
def test_each_change_the_page_shows_makes_the_check_answer_200(org, manager, change):
    conversation = customer_writes(org)
    reply = create_chat(
        organization=org,
        contact=conversation.contact,
        type="outbound",
        status="sent",
        wam_id="wamid.REPLY",
    )
    url, etag = live_of(logged_in(manager), f"/admin/inbox/{conversation.uuid}/")
    assert check(url, etag).status_code == 304

    if change == "a new message":
        customer_writes(org, "Still there?")
    elif change == "a tick":
        deliver(org, webhook_body(delivered(reply.wam_id, "delivered")))
        assert Chat.objects.get(pk=reply.pk).status == "delivered"
    elif change == "a note":
        services.add_note(conversation=conversation, author=manager, body="Call back")
    elif change == "an assignee":
        services.update_conversation(conversation=conversation, actor=manager, assignee=manager)
    elif change == "labels":
        services.update_conversation(conversation=conversation, actor=manager, labels=["vip"])
    else:
        Conversation.objects.filter(pk=conversation.pk).update(
            last_inbound_at=timezone.now() - timedelta(hours=24, seconds=1)
        )

    response = check(url, etag)
    assert response.status_code == 200
    assert response["ETag"] != etag


@pytest.mark.parametrize("change", ["an assignee", "labels", "a resolve", "a read"])
def test_anothers_change_to_a_conversation_makes_the_list_check_answer_200(org, manager, change):
    conversation = customer_writes(org)
    url, etag = live_of(logged_in(manager), "/admin/inbox/")
    other = agent_of(org)

    if change == "an assignee":
        services.update_conversation(conversation=conversation, actor=other, assignee=other)
    elif change == "labels":
        services.update_conversation(conversation=conversation, actor=other, labels=["vip"])
    elif change == "a resolve":
        services.update_conversation(conversation=conversation, actor=other, status="resolved")
    else:
        services.mark_read(conversation=conversation, actor=other)

    response = check(url, etag)
    assert response.status_code == 200
    assert check(url, response["ETag"]).status_code == 304


def test_a_change_that_changes_nothing_leaves_the_list_check_a_304(org, manager):
    conversation = customer_writes(org)
    services.mark_read(conversation=conversation, actor=manager)
    url, etag = live_of(logged_in(manager), "/admin/inbox/")

    services.mark_read(conversation=conversation, actor=manager)
    services.update_conversation(conversation=conversation, actor=manager, labels=[])

    assert check(url, etag).status_code == 304


def test_a_forged_or_expired_token_is_refused(org, manager, settings):
    conversation = customer_writes(org)
    url, etag = live_of(logged_in(manager), f"/admin/inbox/{conversation.uuid}/")
    forged = live.token_for(live.Watch(user=manager.pk, agent=False, conversation=0))

    assert check(url[:-3] + "abc", etag).status_code == 403
    assert check(f"/admin/inbox/live/{forged}x", etag).status_code == 403
    settings.SECRET_KEY = "another secret"
    assert check(url, etag).status_code == 403


def test_an_agent_whose_conversation_went_to_someone_else_gets_a_404(org, manager):
    agent = agent_of(org)
    conversation = customer_writes(org)
    url, etag = live_of(logged_in(agent), f"/admin/inbox/{conversation.uuid}/")

    services.update_conversation(conversation=conversation, actor=manager, assignee=manager)

    assert check(url, etag).status_code == 404


def test_a_token_lives_an_hour(org, manager, monkeypatch):
    conversation = customer_writes(org)
    watch = live.Watch(user=manager.pk, agent=False, conversation=conversation.pk)
    etag = live.etag(watch)
    fresh = live.token_for(watch)
    signed_long_ago = int(time.time()) - live.TOKEN_AGE - 1
    monkeypatch.setattr(
        signing.TimestampSigner, "timestamp", lambda signer: signing.b62_encode(signed_long_ago)
    )
    expired = live.token_for(watch)

    assert check(f"/admin/inbox/live/{fresh}", etag).status_code == 304
    assert check(f"/admin/inbox/live/{expired}", etag).status_code == 403


def test_the_check_is_answered_before_the_admins_middleware(org, manager, caplog):
    conversation = customer_writes(org)
    url, etag = live_of(logged_in(manager), f"/admin/inbox/{conversation.uuid}/")
    assert url == reverse("inbox_admin:live", args=[url.rsplit("/", 1)[1]])
    assert url.startswith(LIVE_PATH)

    with caplog.at_level(logging.INFO, logger="messaging.requests"):
        response = check(url, etag)

    assert response.status_code == 304
    # The request log's line and id are kept; the admin's headers are for pages.
    assert f"GET {url} 304" in caplog.text
    assert response["X-Request-ID"]
    assert "X-Frame-Options" not in response and "Content-Security-Policy" not in response


def test_an_unauthenticated_or_foreign_check_is_still_refused(org, org_b, manager):
    conversation = customer_writes(org)
    url, etag = live_of(logged_in(manager), f"/admin/inbox/{conversation.uuid}/")
    # Organization B's staff member cannot name A's conversation without A's page's token:
    # a token they sign themselves is forged.
    other = manager_of(with_webhook_secrets(org_b), "bea")
    forged = signing.dumps(
        {"u": other.pk, "a": 0, "c": conversation.pk}, salt="another salt", compress=False
    )

    assert check(LIVE_PATH + forged, etag).status_code == 403
    assert check(LIVE_PATH + "not-a-token", "").status_code == 403
    # A logged-in session is no token: the check reads none.
    assert logged_in(other).get(LIVE_PATH + "x", HTTP_IF_NONE_MATCH=etag).status_code == 403


def test_other_methods_and_paths_go_on_to_the_urls(org, manager):
    conversation = customer_writes(org)
    url, etag = live_of(logged_in(manager), f"/admin/inbox/{conversation.uuid}/")

    assert Client().post(url).status_code == 405
    assert Client().head(url).status_code == 405
    assert Client().get(url + "/extra").status_code in (302, 404)  # the admin's
    assert Client().get(LIVE_PATH).status_code in (302, 404)  # the admin's, not a check


def test_a_check_keeps_the_hosts_and_https_rules(org, manager, settings):
    conversation = customer_writes(org)
    url, etag = live_of(logged_in(manager), f"/admin/inbox/{conversation.uuid}/")

    answered = check(url, etag)
    assert answered.status_code == 304
    assert answered["X-Content-Type-Options"] == "nosniff"  # SecurityMiddleware's
    assert Client().get(url, HTTP_HOST="evil.example", HTTP_IF_NONE_MATCH=etag).status_code == 400
    settings.SECURE_SSL_REDIRECT = True
    assert check(url, etag).status_code == 301  # to HTTPS, as every other page
