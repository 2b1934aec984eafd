"""Two requests at once on PostgreSQL: one phone number id, two organizations (and two
requests of one); one organization's two first sends, each wanting its default number."""

import threading

import pytest
from django.db import connection

from business_numbers.models import Number
from tests.account_news.conftest import for_account, payload
from tests.conftest import client_for
from tests.databases import on_postgresql
from tests.factories import OrganizationFactory
from tests.inbound.conftest import deliver, envelope, text_message

pytestmark = [on_postgresql, pytest.mark.django_db(transaction=True)]

BODY = {
    "label": "Shared",
    "phone_number_id": "106540352247777",
    "business_account_id": "102290129340398",
    "access_token": "EAAG-raced",
}


def at_once(*calls) -> list:
    """Run the calls in threads released together; their results, in order."""
    start = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(index, call):
        try:
            start.wait()
            results[index] = call()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.parametrize("same_organization", [False, True])
def test_two_requests_for_one_phone_number_id_make_one_number(same_organization):
    first = OrganizationFactory(name="First", rate_limit=1_000_000)
    second = first if same_organization else OrganizationFactory(name="Second", rate_limit=10**6)
    clients = [client_for(first), client_for(second)]
    for _ in range(5):
        Number.objects.filter(phone_number_id=BODY["phone_number_id"]).delete()
        answers = at_once(
            *(lambda c=c: c.post("/api/numbers", BODY, format="json") for c in clients)
        )
        assert sorted(answer.status_code for answer in answers) == [200, 409]
        refused = next(answer for answer in answers if answer.status_code == 409)
        assert "phone_number_id" in refused.json()["errors"]
        assert Number.objects.filter(phone_number_id=BODY["phone_number_id"]).count() == 1


def test_an_organizations_first_messages_at_once_share_one_default_number():
    organization = OrganizationFactory(name="New", rate_limit=1_000_000)
    client = client_for(organization)
    answers = at_once(
        *(
            lambda n=n: client.post("/api/send", {"phone": f"+4915112345{n:03d}", "message": "Hi"})
            for n in range(4)
        )
    )
    assert [answer.status_code for answer in answers] == [200] * 4
    assert Number.objects.filter(organization=organization).count() == 1


def test_deliveries_of_a_message_and_news_at_once_never_deadlock(webhook_org):
    """A delivery holding a message and news of its number records the chat (whose
    foreign key check shares the number's row) and then locks the number for the news.
    Several such deliveries at once must not wait for each other in a circle: the news
    takes the lock that leaves foreign key checks alone (FOR NO KEY UPDATE)."""
    news = payload("meta_number_health.json", "quality_flagged")
    for_account(webhook_org, news)
    news_change = news["entry"][0]["changes"][0]

    def both(n):
        delivery = envelope(text_message("hi", sender=f"4915100{n:05d}"))
        delivery["entry"][0]["id"] = news["entry"][0]["id"]
        delivery["entry"][0]["changes"].append(news_change)
        return deliver(webhook_org, delivery).status_code

    for first in range(0, 80, 8):
        answers = at_once(*(lambda n=n: both(n) for n in range(first, first + 8)))
        assert answers == [200] * 8
