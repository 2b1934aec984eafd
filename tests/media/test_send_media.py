"""POST /api/send/media: the Cloud API's link messages as Meta documents them, the
validation before anything leaves, and the chat and failures exactly as POST /api/send."""

import json

import pytest

from business_numbers.gateway import sandbox
from contacts.models import Contact
from devtools.cloud_api_server import graph_error
from messaging_project.api.idempotency import IdempotencyKey
from sending.models import Chat, ChatStatus
from tests.channel import ACCESS_TOKEN, PHONE_NUMBER_ID

PHONE = "+49 151 23456789"
DIGITS = "4915123456789"
IMAGE = "https://cdn.example.com/photos/order-1234.jpg"


def send(api, **body):
    return api.post(
        "/api/send/media",
        {"phone": PHONE, "media_type": "image", "media_url": IMAGE, **body},
        format="json",
    )


# Meta's documented request bodies for a message sent by link (the pages on image,
# document, audio, video and sticker messages), with our values in Meta's placeholders.
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"media_type": "image", "media_url": IMAGE, "caption": "Your order"},
            {"type": "image", "image": {"link": IMAGE, "caption": "Your order"}},
        ),
        (
            {
                "media_type": "document",
                "media_url": "https://cdn.example.com/invoice.pdf",
                "caption": "Lucky Shrub Invoice",
                "file_name": "lucky-shrub-invoice.pdf",
            },
            {
                "type": "document",
                "document": {
                    "link": "https://cdn.example.com/invoice.pdf",
                    "caption": "Lucky Shrub Invoice",
                    "filename": "lucky-shrub-invoice.pdf",
                },
            },
        ),
        (
            {"media_type": "audio", "media_url": "https://cdn.example.com/note.ogg"},
            {"type": "audio", "audio": {"link": "https://cdn.example.com/note.ogg"}},
        ),
        (
            {
                "media_type": "video",
                "media_url": "https://cdn.example.com/clip.mp4",
                "caption": "How to repot",
            },
            {
                "type": "video",
                "video": {"link": "https://cdn.example.com/clip.mp4", "caption": "How to repot"},
            },
        ),
        (
            {"media_type": "sticker", "media_url": "https://cdn.example.com/thanks.webp"},
            {"type": "sticker", "sticker": {"link": "https://cdn.example.com/thanks.webp"}},
        ),
    ],
    ids=["image", "document", "audio", "video", "sticker"],
)
def test_each_media_type_reaches_the_cloud_api_as_meta_documents_it(
    api, cloud_org, graph, body, expected
):
    response = send(api, **body)

    assert response.status_code == 200, response.json()
    [request] = graph.requests
    assert request.path == f"/v21.0/{PHONE_NUMBER_ID}/messages"
    assert request.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert request.json == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": DIGITS,
        **expected,
        "biz_opaque_callback_data": f"chat:{response.json()['data']['data']['chat']['uuid']}",
    }
    chat = response.json()["data"]["data"]["chat"]
    assert json.loads(chat["metadata"]) == expected


def test_the_answer_and_the_chat_are_those_of_a_text_send(api, cloud_org, graph):
    response = send(api, caption="Your order")

    assert response.status_code == 200
    body = response.json()
    assert body["statusCode"] == 200
    assert body["data"]["success"] is True
    data = body["data"]["data"]
    assert data["contacts"] == [{"input": PHONE, "wa_id": DIGITS}]
    [message] = data["messages"]
    chat = Chat.objects.get(uuid=data["chat"]["uuid"])
    assert message == {"id": chat.wam_id}
    assert chat.status == ChatStatus.ACCEPTED
    assert chat.type == "outbound"
    assert chat.contact.phone == DIGITS
    assert data["chat"]["contact"]["phone"] == DIGITS
    assert data["chat"]["media"] is None  # nothing kept here: WhatsApp fetched the link


def test_the_sandbox_accepts_a_media_send(api):
    response = send(api, media_type="video", media_url="https://cdn.example.com/a.mp4")

    assert response.status_code == 200, response.json()
    [sent] = sandbox.sent_messages(api.organization.pk)
    assert sent.payload["video"] == {"link": "https://cdn.example.com/a.mp4"}
    wam_id = response.json()["data"]["data"]["messages"][0]["id"]
    assert wam_id.startswith("wamid.")
    assert Chat.objects.get(wam_id=wam_id).status == ChatStatus.ACCEPTED


def test_a_new_contact_gets_the_names_and_email_sent(api):
    send(api, first_name="Ada", last_name="Lovelace", email="ada@example.com")

    contact = Contact.objects.get(phone=DIGITS)
    assert (contact.first_name, contact.last_name, contact.email) == (
        "Ada",
        "Lovelace",
        "ada@example.com",
    )


def test_an_existing_contact_keeps_its_names(api):
    send(api, first_name="Ada")
    send(api, first_name="Grace")

    assert Contact.objects.get(phone=DIGITS).first_name == "Ada"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"media_type": "gif"}, "media_type"),
        ({"media_type": None}, "media_type"),
        ({"media_url": "ftp://cdn.example.com/a.jpg"}, "media_url"),
        ({"media_url": "http://cdn.example.com/a.jpg"}, "media_url"),  # https only
        ({"media_url": "https://127.0.0.1/a.jpg"}, "media_url"),
        ({"media_url": "https://10.0.0.7/a.jpg"}, "media_url"),
        ({"media_url": "https://169.254.169.254/latest/meta-data"}, "media_url"),
        ({"media_url": "not a url"}, "media_url"),
        ({"media_url": 42}, "media_url"),
        ({"caption": "x" * 1025}, "caption"),
        ({"caption": "nul\x00"}, "caption"),
        ({"phone": "12"}, "phone"),
        ({"email": "not-an-email"}, "email"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_sends_nothing(api, cloud_org, graph, body, field):
    response = send(api, **body)

    assert response.status_code == 400, response.json()
    assert response.json()["message"] == "The given data was invalid."
    assert field in response.json()["errors"]
    assert graph.requests == []
    assert not Chat.objects.exists()


def test_a_caption_of_1024_characters_is_sent(api, cloud_org, graph):
    assert send(api, caption="x" * 1024).status_code == 200
    assert graph.requests[0].json["image"]["caption"] == "x" * 1024


def test_http_is_accepted_where_private_urls_are_allowed(api, cloud_org, graph, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True

    assert send(api, media_url="http://127.0.0.1:8000/a.jpg").status_code == 200


def test_a_refusal_is_a_422_with_the_channel_error_and_a_failed_chat(api, cloud_org, graph):
    graph.reply(400, graph_error(131053, "Media upload error", details="Unsupported type"))

    response = send(api)

    assert response.status_code == 422
    body = response.json()
    assert body["message"] == "Media upload error"
    assert body["channel_error"]["code"] == 131053
    chat = Chat.objects.get()
    assert chat.status == ChatStatus.FAILED
    assert chat.error_code == 131053
    assert chat.metadata == {"type": "image", "image": {"link": IMAGE}}


@pytest.mark.parametrize(("status", "expected"), [(500, 502), (401, 502)])
def test_channel_failures_are_mapped_as_for_a_text_send(api, cloud_org, graph, status, expected):
    graph.reply(status, graph_error(190 if status == 401 else 2, "broken"))

    assert send(api).status_code == expected
    assert Chat.objects.get().status == ChatStatus.FAILED


def test_a_channel_that_does_not_answer_in_time_is_a_504(api, cloud_org, graph, settings):
    settings.WHATSAPP_TIMEOUT = 0.2
    graph.reply(delay=1)

    assert send(api).status_code == 504


def test_an_unconfigured_channel_is_a_403(api, org_a):
    from tests.channel import set_channel

    set_channel(org_a, kind="cloud_api", phone_number_id="", access_token="")

    response = send(api)
    assert response.status_code == 403
    assert response.json()["message"] == "Please setup your whatsapp account!"


def test_an_idempotency_key_sends_once(api, cloud_org, graph):
    body = {"phone": PHONE, "media_type": "image", "media_url": IMAGE}
    first = api.post("/api/send/media", body, format="json", HTTP_IDEMPOTENCY_KEY="media-1")
    again = api.post("/api/send/media", body, format="json", HTTP_IDEMPOTENCY_KEY="media-1")

    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert len(graph.requests) == 1
    assert IdempotencyKey.objects.count() == 1
