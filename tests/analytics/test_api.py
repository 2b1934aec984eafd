"""The analytics over the API: the days read from the rollup, a campaign's report
against the chats it counts, staff's figures; errors in the project's shape."""

from datetime import timedelta

import pytest
from django.utils import timezone

from analytics.folding import fold
from business_numbers.models import Number
from campaigns.models import Campaign, Recipient, RecipientStatus
from sending.models import Chat
from tests.analytics.conftest import MARKETING, send
from tests.conftest import client_for
from tests.factories import ContactFactory, OrganizationFactory
from tests.inbound.conftest import deliver, envelope, status, statuses, text_message

pytestmark = pytest.mark.django_db


def today() -> str:
    return timezone.now().date().isoformat()


def test_messages_a_row_per_day_with_zeros(api, webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    deliver(webhook_org, envelope(statuses(status("wamid.A1", "read", 300, pricing=MARKETING))))
    deliver(webhook_org, envelope(text_message("hi")))
    start = (timezone.now() - timedelta(days=2)).date().isoformat()
    response = api.get(f"/api/analytics/messages?from={start}&to={today()}")
    assert response.status_code == 200, response.content
    rows = response.json()["data"]
    assert [row["date"] for row in rows][-1] == today() and len(rows) == 3
    empty = {"outbound": 0, "sent": 0, "delivered": 0, "read": 0, "failed": 0, "inbound": 0}
    assert rows[0] == {"date": start, **empty, "billable": {}}
    assert rows[2] == {
        "date": today(),
        **empty,
        "outbound": 1,
        "sent": 1,
        "delivered": 1,
        "read": 1,
        "inbound": 1,
        "billable": {"marketing": 1},
    }


def test_messages_as_csv(api, webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    deliver(webhook_org, envelope(statuses(status("wamid.A1", "sent", 100, pricing=MARKETING))))
    response = api.get(f"/api/analytics/messages?from={today()}&to={today()}&format=csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response.content.decode().splitlines() == [
        "date,outbound,sent,delivered,read,failed,inbound,billable_marketing",
        f"{today()},1,1,0,0,0,0,1",
    ]


def test_messages_of_one_number(api, webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    other = Number.objects.create(organization=webhook_org, label="Two", kind="sandbox")
    url = f"/api/analytics/messages?from={today()}&to={today()}&number="
    mine = Number.objects.default_for(webhook_org)
    assert api.get(url + str(mine.uuid)).json()["data"][0]["outbound"] == 1
    assert api.get(url + str(other.uuid)).json()["data"][0]["outbound"] == 0


@pytest.mark.parametrize(
    "query, field",
    [
        ("to=2026-01-01", "from"),
        ("from=2026-01-01", "to"),
        ("from=2026-1-1&to=2026-01-02", "from"),
        ("from=2026-02-30&to=2026-03-01", "from"),
        ("from=2026-01-02&to=2026-01-01", "to"),
        ("from=2025-01-01&to=2026-01-02", "to"),
        ("from=2026-01-01&to=2026-01-01&format=xml", "format"),
        ("from=2026-01-01&to=2026-01-01&number=nope", "number"),
    ],
)
def test_bad_ranges_are_400_in_the_projects_shape(api, webhook_org, query, field):
    response = api.get(f"/api/analytics/messages?{query}")
    assert response.status_code == 400
    body = response.json()
    assert body["message"] == "The given data was invalid."
    assert list(body["errors"]) == [field]


def test_the_limit_is_said(api, webhook_org):
    body = api.get("/api/analytics/messages?from=2025-01-01&to=2026-01-02").json()
    assert body["errors"]["to"] == ["The range may cover at most 366 days."]
    assert api.get("/api/analytics/messages?from=2025-01-01&to=2026-01-01").status_code == 200


def test_another_organizations_number_is_unknown(api, webhook_org):
    theirs = Number.objects.default_for(OrganizationFactory())
    query = f"from={today()}&to={today()}&number={theirs.uuid}"
    response = api.get(f"/api/analytics/messages?{query}")
    assert response.status_code == 400
    assert response.json()["errors"] == {"number": ["No such number."]}


def test_reading_90_days_costs_a_fixed_few_queries(api, webhook_org, django_assert_num_queries):
    start = (timezone.now() - timedelta(days=89)).date().isoformat()
    api.get(f"/api/analytics/messages?from={start}&to={today()}")  # warm the token's cache
    # the rate limit's counter; the increments taken and the moved chats counted (none
    # left); in one snapshot (here the test's transaction's savepoint and its release):
    # the days, the billable days and the moved chats the fold had to leave (the token
    # is cached). Whatever the days' number of chats.
    with django_assert_num_queries(8):
        assert (
            len(api.get(f"/api/analytics/messages?from={start}&to={today()}").json()["data"]) == 90
        )


# A campaign's report -------------------------------------------------------------------


def campaign_with(organization, chats: list[Chat | None], statuses_: list[str]) -> Campaign:
    campaign = Campaign.objects.create(
        organization=organization,
        name="Spring",
        number=Number.objects.default_for(organization),
        template={"name": "spring", "language": {"code": "en"}},
        rate=10,
    )
    Recipient.objects.bulk_create(
        Recipient(
            campaign=campaign,
            phone=chat.contact.phone if chat else "123",
            contact=chat.contact if chat else None,
            chat=chat,
            status=state,
            error="" if chat else "Not a phone number.",
        )
        for chat, state in zip(chats, statuses_, strict=True)
    )
    return campaign


def test_a_campaign_report_counts_its_chats(api, webhook_org, django_assert_num_queries):
    contacts = [ContactFactory(organization=webhook_org, phone=f"1415555{n:04d}") for n in range(4)]
    chats = [send(webhook_org, wam_id=f"wamid.C{n}", contact=contacts[n]) for n in range(4)]
    error = {"code": 131026, "title": "Message undeliverable"}
    deliver(
        webhook_org,
        envelope(
            statuses(
                status("wamid.C0", "read", 300, pricing=MARKETING),
                status("wamid.C1", "delivered", 200, pricing=MARKETING),
                status("wamid.C2", "sent", 100, pricing=MARKETING),
                status("wamid.C3", "failed", 100, errors=[error]),
            )
        ),
    )
    # C0 answers; C1 opts out; someone who is not a recipient writes too.
    deliver(webhook_org, envelope(text_message("Thanks!", sender=contacts[0].phone)))
    contacts[1].opted_out = True
    contacts[1].save()
    deliver(webhook_org, envelope(text_message("Hello", sender="4930123456")))
    sent, failed = RecipientStatus.SENT, RecipientStatus.FAILED
    campaign = campaign_with(webhook_org, [*chats, None], [sent, sent, sent, failed, failed])
    send(webhook_org, wam_id="wamid.OTHER")  # not the campaign's
    fold()  # as the worker does each minute
    # the rate limit's counter; the campaign; the increments taken and the moved chats
    # counted (none left); its totals; its errors; its billable messages
    with django_assert_num_queries(7):
        response = api.get(f"/api/campaigns/{campaign.uuid}/report")
    assert response.status_code == 200, response.content
    assert response.json() == {
        "data": {
            "recipients": 5,
            "sent": 3,
            "delivered": 2,
            "read": 1,
            "replied": 1,
            "failed": 2,
            "opted_out": 1,
            "errors": [
                {"code": 131026, "title": "Message undeliverable", "count": 1},
                {"code": None, "title": "Not a phone number.", "count": 1},
            ],
            "billable": {"marketing": 3},
        }
    }


def test_a_reply_after_72_hours_is_not_counted(api, webhook_org, monkeypatch):
    contact = ContactFactory(organization=webhook_org, phone="14155550001")
    chat = send(webhook_org, wam_id="wamid.C0", contact=contact)
    later = chat.created_at + timedelta(hours=72, seconds=1)
    monkeypatch.setattr(timezone, "now", lambda: later)
    deliver(webhook_org, envelope(text_message("Late", sender=contact.phone)))
    campaign = campaign_with(webhook_org, [chat], [RecipientStatus.SENT])
    assert api.get(f"/api/campaigns/{campaign.uuid}/report").json()["data"]["replied"] == 0


def test_another_organizations_campaign_report_is_404(webhook_org, api):
    theirs = campaign_with(OrganizationFactory(), [], [])
    assert api.get(f"/api/campaigns/{theirs.uuid}/report").status_code == 404
    assert api.get("/api/campaigns/not-a-uuid/report").status_code == 404
    other_client = client_for(theirs.organization)
    assert other_client.get(f"/api/campaigns/{theirs.uuid}/report").status_code == 200
