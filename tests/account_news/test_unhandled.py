"""Webhook fields nobody handles are kept in a log staff can read: per organization and
field, how many and the last one, counted right however many deliveries race."""

import threading

import pytest
from django.db import connection
from django.urls import reverse

from sending.models import UnhandledWebhookItem
from tests.account_news.conftest import APP_SECRET, deliver
from tests.admin.conftest import logged_in
from tests.channel import set_channel
from tests.factories import OrganizationFactory

# A field the service does not handle: Meta's webhook reference example of `security`
# (developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/security).
SECURITY = {
    "entry": [
        {
            "id": "102290129340398",
            "time": 1748811473,
            "changes": [
                {
                    "value": {
                        "display_phone_number": "15550783881",
                        "event": "PIN_RESET_REQUEST",
                        "requester": "61555822107539",
                    },
                    "field": "security",
                }
            ],
        }
    ],
    "object": "whatsapp_business_account",
}


@pytest.mark.django_db
def test_an_unhandled_field_is_counted_with_its_last_payload(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    first = deliver(org_a, SECURITY).json()["processed"]
    assert first["skipped"] == 1
    # The reference's other event, which names no requester.
    later = {"display_phone_number": "15550783881", "event": "PIN_CHANGED"}
    changed = {"object": SECURITY["object"], "entry": [dict(SECURITY["entry"][0])]}
    changed["entry"][0]["changes"] = [{"field": "security", "value": later}]
    deliver(org_a, changed)
    item = UnhandledWebhookItem.objects.get()
    assert (item.organization, item.field, item.count) == (org_a, "security", 2)
    assert item.last_payload == later
    assert item.first_seen <= item.last_seen


@pytest.mark.django_db
def test_an_unstorable_payload_is_counted_without_it(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    deliver(org_a, {"entry": [{"changes": [{"field": "security", "value": {"a": "\u0000"}}]}]})
    item = UnhandledWebhookItem.objects.get()
    assert (item.count, item.last_payload) == (1, None)


@pytest.mark.django_db
def test_the_admin_list_shows_a_staff_member_only_their_organization(org_a, org_b, staff_a):
    set_channel(org_a, app_secret=APP_SECRET)
    set_channel(org_b, app_secret=APP_SECRET)
    deliver(org_a, SECURITY)
    other = {**SECURITY, "entry": [{**SECURITY["entry"][0], "id": "1"}]}
    other["entry"][0]["changes"] = [{"field": "calls", "value": {"x": 1}}]
    deliver(org_b, other)
    client = logged_in(staff_a)
    page = client.get(reverse("admin:sending_unhandledwebhookitem_changelist"))
    assert page.status_code == 200
    assert "security" in page.text and "calls" not in page.text
    item = UnhandledWebhookItem.objects.get(organization=org_a)
    detail = client.get(reverse("admin:sending_unhandledwebhookitem_change", args=[item.pk]))
    assert detail.status_code == 200 and "PIN_RESET_REQUEST" in detail.text
    assert 'name="_save"' not in detail.text  # read-only
    theirs = UnhandledWebhookItem.objects.get(organization=org_b)
    hidden = client.get(reverse("admin:sending_unhandledwebhookitem_change", args=[theirs.pk]))
    assert hidden.status_code in (302, 404)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="races need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_concurrent_deliveries_of_the_same_field_lose_no_count():
    org = OrganizationFactory(name="Racing organization", rate_limit=1_000_000)
    set_channel(org, app_secret=APP_SECRET)
    threads, per_thread, errors = 8, 5, []
    start = threading.Barrier(threads)

    def deliver_some():
        try:
            start.wait()
            for _ in range(per_thread):
                assert deliver(org, SECURITY).status_code == 200
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(error)
        finally:
            connection.close()

    workers = [threading.Thread(target=deliver_some) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert UnhandledWebhookItem.objects.get(organization=org).count == threads * per_thread


@pytest.mark.django_db
def test_a_change_naming_a_number_is_routed_by_it_not_by_its_entry(org_a):
    set_channel(
        org_a,
        app_secret=APP_SECRET,
        kind="cloud_api",
        phone_number_id="106540352242922",
        business_account_id="102290129340398",
    )

    def calls(number: str) -> dict:
        value = {"messaging_product": "whatsapp", "metadata": {"phone_number_id": number}}
        change = {"field": "calls", "value": value}
        return {"entry": [{"id": "999999999999999", "changes": [change]}]}

    assert deliver(org_a, calls("106540352242922")).json()["processed"]["skipped"] == 1
    assert deliver(org_a, calls("1")).json()["processed"]["other_number"] == 1
    assert UnhandledWebhookItem.objects.get().count == 1
