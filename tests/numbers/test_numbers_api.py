"""/api/numbers: an organization's numbers, their refusals, and which number a send goes
from (docs/numbers.md), against the loopback Cloud API."""

import pytest

from business_numbers.api.schema import NumberDetail, NumberPage, NumberRecordSerializer
from business_numbers.models import Number
from business_numbers.representations import number_data
from business_numbers.services import configure_channel
from campaigns.models import CampaignStatus
from sending.models import Chat
from tests.channel import ACCESS_TOKEN, BUSINESS_ACCOUNT_ID, PHONE_NUMBER_ID
from tests.factories import create_campaign_record
from tests.shapes import assert_documented

pytestmark = pytest.mark.django_db

SUPPORT_ID = "106540352242999"
SUPPORT = {
    "label": "Support",
    "phone_number_id": SUPPORT_ID,
    "business_account_id": BUSINESS_ACCOUNT_ID,
    "access_token": "EAAG-support-token",
}
PHONE = "4915112345678"


@pytest.fixture
def two_numbers(cloud_org, api):
    """Organization A with its default Cloud API number and a second one, Support."""
    response = api.post("/api/numbers", SUPPORT, format="json")
    assert response.status_code == 200, response.json()
    return Number.objects.get(organization=cloud_org, is_default=True), Number.objects.get(
        uuid=response.json()["id"]
    )


def sent_from(graph) -> list[str]:
    """The phone number id each message request went to, in order."""
    return [
        request.path.split("/")[2]
        for request in graph.requests
        if request.method == "POST" and request.path.endswith("/messages")
    ]


def test_the_numbers_are_listed_default_first_without_their_token(two_numbers, api):
    listed = api.get("/api/numbers").json()
    assert [n["phone_number_id"] for n in listed["data"]] == [PHONE_NUMBER_ID, SUPPORT_ID]
    assert [n["is_default"] for n in listed["data"]] == [True, False]
    assert listed["meta"]["total"] == 2
    shown = api.get(f"/api/numbers/{two_numbers[1].uuid}").json()["data"]
    assert shown["label"] == "Support" and shown["kind"] == "cloud"
    assert "access_token" not in shown
    assert ACCESS_TOKEN not in str(listed) and "EAAG-support-token" not in str(shown)


def test_a_sandbox_number_takes_no_credentials(api, org_a):
    response = api.post("/api/numbers", {"label": "Demo", "kind": "sandbox"}, format="json")
    assert response.status_code == 200
    number = Number.objects.get(uuid=response.json()["id"])
    assert (number.kind, number.phone_number_id) == ("sandbox", "")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"label": "x"}, "phone_number_id"),
        ({**SUPPORT, "phone_number_id": "12ab"}, "phone_number_id"),
        ({**SUPPORT, "access_token": "two words"}, "access_token"),
        ({**SUPPORT, "kind": "telegram"}, "kind"),
        ({**SUPPORT, "colour": "red"}, "colour"),
    ],
)
def test_bad_input_names_the_field_and_changes_nothing(api, org_a, body, field):
    before = Number.objects.count()
    response = api.post("/api/numbers", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert Number.objects.count() == before


def test_a_phone_number_id_belongs_to_one_organization_only(two_numbers, api, api_b, org_b):
    again = api.post("/api/numbers", SUPPORT, format="json")
    assert again.status_code == 409 and "phone_number_id" in again.json()["errors"]
    taken = api_b.post("/api/numbers", SUPPORT, format="json")
    assert taken.status_code == 409
    assert not Number.objects.filter(organization=org_b, phone_number_id=SUPPORT_ID).exists()
    with pytest.raises(Exception, match="already connected"):
        configure_channel(organization=org_b, phone_number_id=SUPPORT_ID, access_token="t")


def test_another_organizations_number_is_not_found(two_numbers, api_b):
    support = two_numbers[1]
    assert api_b.get(f"/api/numbers/{support.uuid}").status_code == 404
    assert api_b.patch(f"/api/numbers/{support.uuid}", {"label": "x"}).status_code == 404
    assert api_b.delete(f"/api/numbers/{support.uuid}").status_code == 404


def test_a_new_default_takes_the_organizations_webhook_secrets(two_numbers, api):
    default, support = two_numbers
    configure_channel(
        organization=default.organization,
        phone_number_id=PHONE_NUMBER_ID,
        access_token=ACCESS_TOKEN,
        app_secret="the-app-secret",
    )
    response = api.patch(f"/api/numbers/{support.uuid}", {"is_default": True}, format="json")
    assert response.status_code == 200
    support.refresh_from_db()
    default.refresh_from_db()
    assert (support.is_default, default.is_default) == (True, False)
    assert support.app_secret == "the-app-secret"
    channel = api.get("/api/channel").json()["data"]
    assert channel["phone_number_id"] == SUPPORT_ID


def test_the_default_cannot_be_unset_or_deleted_while_others_exist(two_numbers, api):
    default, support = two_numbers
    unset = api.patch(f"/api/numbers/{default.uuid}", {"is_default": False}, format="json")
    assert unset.status_code == 400
    deleted = api.delete(f"/api/numbers/{default.uuid}")
    assert deleted.status_code == 409 and "is_default" in deleted.json()["errors"]
    assert Number.objects.live().count() == 2


def test_a_number_a_campaign_waits_on_is_not_deleted(two_numbers, api):
    default, support = two_numbers
    create_campaign_record(
        organization=support.organization,
        number=support,
        name="Spring",
        template={"name": "hello_world", "language": {"code": "en_US"}},
        phones=["+4915112345678"],
        rate=10,
        status=CampaignStatus.SCHEDULED,
    )
    response = api.delete(f"/api/numbers/{support.uuid}")
    assert response.status_code == 409 and "number" in response.json()["errors"]
    assert Number.objects.get(pk=support.pk).deleted_at is None


def test_deleting_a_number_keeps_its_chats(two_numbers, api, graph):
    default, support = two_numbers
    sent = api.post("/api/send", {"phone": f"+{PHONE}", "message": "Hi", "from": SUPPORT_ID})
    assert sent.status_code == 200
    assert api.delete(f"/api/numbers/{support.uuid}").status_code == 200
    chat = Chat.objects.get()
    assert chat.number_id == support.pk
    assert api.get("/api/chats").json()["data"][0]["number"] == str(support.uuid)
    assert [n["uuid"] for n in api.get("/api/numbers").json()["data"]] == [str(default.uuid)]


@pytest.mark.parametrize("name", ["uuid", "phone_number_id", "display"])
def test_from_names_the_number_a_send_goes_from(two_numbers, api, graph, name):
    support = two_numbers[1]
    Number.objects.filter(pk=support.pk).update(display_phone_number="15550001111")
    sender = {
        "uuid": str(support.uuid),
        "phone_number_id": SUPPORT_ID,
        "display": "+1 555-000-1111",
    }[name]
    response = api.post("/api/send", {"phone": f"+{PHONE}", "message": "Hi", "from": sender})
    assert response.status_code == 200, response.json()
    assert sent_from(graph) == [SUPPORT_ID]
    assert Chat.objects.get().number_id == support.pk


def test_an_unknown_from_is_refused_before_anything_is_sent(two_numbers, api, graph):
    response = api.post("/api/send", {"phone": f"+{PHONE}", "message": "Hi", "from": "999"})
    assert response.status_code == 400 and "from" in response.json()["errors"]
    assert sent_from(graph) == [] and not Chat.objects.exists()


def test_without_from_a_send_goes_from_the_default_then_the_number_last_written_to(
    two_numbers, api, graph
):
    default, support = two_numbers
    api.post("/api/send", {"phone": f"+{PHONE}", "message": "first"})
    # The contact writes to Support; what follows goes from Support, replies included.
    first = Chat.objects.get()
    Chat.objects.filter(pk=first.pk).update(number=support, type="inbound")
    api.post("/api/send", {"phone": f"+{PHONE}", "message": "second"})
    api.post("/api/send", {"phone": f"+{PHONE}", "message": "third", "reply_to": str(first.uuid)})
    assert sent_from(graph) == [PHONE_NUMBER_ID, SUPPORT_ID, SUPPORT_ID]


def test_the_number_record_and_page_have_exactly_their_documented_fields(two_numbers, api):
    assert_documented(number_data(two_numbers[1]), NumberRecordSerializer())
    assert_documented(api.get("/api/numbers").json(), NumberPage())
    assert_documented(api.get(f"/api/numbers/{two_numbers[0].uuid}").json(), NumberDetail())
