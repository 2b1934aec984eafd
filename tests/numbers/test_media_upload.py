"""Files staff send (business_numbers.services.upload_media): checked against what
WhatsApp takes before anything leaves, then put on the number's channel, the loopback
Cloud API or the sandbox, and known by the id the channel gives."""

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage

from business_numbers.gateway import GatewayError
from business_numbers.gateway.sandbox import media_name
from business_numbers.models import Number
from business_numbers.services import upload_media
from business_numbers.services.media import MB
from tests.channel import ACCESS_TOKEN, PHONE_NUMBER_ID

PDF = b"%PDF-1.4\n% a tiny document\n"


def test_a_file_goes_to_the_cloud_api_as_graph_takes_an_upload(cloud_org, graph):
    number = Number.objects.default_for(cloud_org)

    uploaded = upload_media(
        number=number, content=PDF, mime_type="application/pdf", file_name="invoice.pdf"
    )

    assert uploaded.media_type == "document"
    assert uploaded.media_id.isdigit()
    request = graph.requests[-1]
    assert request.path.endswith(f"/{PHONE_NUMBER_ID}/media")
    assert request.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert request.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    for part in (b'name="messaging_product"', b"whatsapp", b'name="type"', PDF):
        assert part in request.body
    assert b'filename="invoice.pdf"' in request.body


def test_an_answer_without_a_media_id_is_a_gateway_error(cloud_org, graph):
    graph.reply(json={"messaging_product": "whatsapp"})

    with pytest.raises(GatewayError, match="no media id"):
        upload_media(
            number=Number.objects.default_for(cloud_org),
            content=PDF,
            mime_type="application/pdf",
            file_name="invoice.pdf",
        )


def test_the_sandbox_keeps_the_file_as_its_media(org_a):
    uploaded = upload_media(
        number=Number.objects.default_for(org_a),
        content=PDF,
        mime_type="application/pdf",
        file_name="invoice.pdf",
    )

    with default_storage.open(media_name(uploaded.media_id)) as stored:
        assert stored.read() == PDF


@pytest.mark.parametrize(
    ("mime_type", "size", "message"),
    [
        ("application/x-msdownload", 10, "WhatsApp does not take application/x-msdownload"),
        ("image/png", 5 * MB + 1, "at most 5 MB"),
        ("audio/ogg", 0, "The file is empty."),
    ],
)
def test_what_whatsapp_does_not_take_never_leaves(cloud_org, graph, mime_type, size, message):
    with pytest.raises(ValidationError, match=message):
        upload_media(
            number=Number.objects.default_for(cloud_org),
            content=b"x" * size,
            mime_type=mime_type,
            file_name="file",
        )
    assert not graph.requests
