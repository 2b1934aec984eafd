"""Template components are checked before anything leaves for WhatsApp.

`template.components` is JSON the service passes through to the Cloud API. It is
checked for the shapes Meta documents for sending a template (component and parameter
types, a button's `sub_type` and `index`), for depth, for size and for text a database
cannot store. A refused send is a 400 naming the field that sends nothing, records no
chat and creates no contact; a retry with the same Idempotency-Key is refused the same
way, so a client's blind retries never reach WhatsApp either.
"""

import json

import pytest

from contacts.models import Contact
from sending.models import Chat
from tests.sending.factories import ChatFactory

PHONE = "+4915123456789"
# Meta's own examples, from its pages on sending each kind of template.
DOCUMENTED_COMPONENTS = {
    "text, currency and date_time in the body, a media header": [
        {
            "type": "header",
            "parameters": [{"type": "image", "image": {"link": "https://x.test/a.png"}}],
        },
        {
            "type": "body",
            "parameters": [
                {"type": "text", "text": "Pablo"},
                {
                    "type": "currency",
                    "currency": {"fallback_value": "$100.99", "code": "USD", "amount_1000": 100990},
                },
                {"type": "date_time", "date_time": {"fallback_value": "February 25, 1977"}},
            ],
        },
        {
            "type": "button",
            "sub_type": "quick_reply",
            "index": "0",
            "parameters": [{"type": "payload", "payload": "PAYLOAD"}],
        },
    ],
    "a document header and a video header": [
        {
            "type": "header",
            "parameters": [{"type": "document", "document": {"id": "1", "filename": "a.pdf"}}],
        },
        {"type": "HEADER", "parameters": [{"type": "video", "video": {"id": "2"}}]},
    ],
    "a location header": [
        {
            "type": "header",
            "parameters": [
                {
                    "type": "location",
                    "location": {"latitude": "37.48", "longitude": "-122.14", "name": "HQ"},
                }
            ],
        }
    ],
    "a limited-time offer with a copy-code and a url button": [
        {
            "type": "limited_time_offer",
            "parameters": [
                {
                    "type": "limited_time_offer",
                    "limited_time_offer": {"expiration_time_ms": 1209600000},
                }
            ],
        },
        {
            "type": "button",
            "sub_type": "copy_code",
            "index": 0,
            "parameters": [{"type": "coupon_code", "coupon_code": "CARIBE25"}],
        },
        {
            "type": "button",
            "sub_type": "url",
            "index": 1,
            "parameters": [{"type": "text", "text": "n3mtql"}],
        },
    ],
    "a media card carousel": [
        {"type": "body", "parameters": [{"type": "text", "text": "Pablo"}]},
        {
            "type": "carousel",
            "cards": [
                {
                    "card_index": 0,
                    "components": [
                        {
                            "type": "header",
                            "parameters": [{"type": "image", "image": {"id": "1558081531584829"}}],
                        },
                        {
                            "type": "button",
                            "sub_type": "quick_reply",
                            "index": 0,
                            "parameters": [{"type": "payload", "payload": "more-like-this"}],
                        },
                    ],
                }
            ],
        },
    ],
    "a product card carousel": [
        {
            "type": "carousel",
            "cards": [
                {
                    "card_index": 0,
                    "components": [
                        {
                            "type": "header",
                            "parameters": [
                                {
                                    "type": "product",
                                    "product": {
                                        "product_retailer_id": "vrpj01fvwp",
                                        "catalog_id": "194836987003835",
                                    },
                                }
                            ],
                        }
                    ],
                }
            ],
        }
    ],
    "a multi-product button": [
        {
            "type": "button",
            "sub_type": "mpm",
            "index": 0,
            "parameters": [
                {
                    "type": "action",
                    "action": {
                        "thumbnail_product_retailer_id": "2lc20305pt",
                        "sections": [
                            {
                                "title": "Popular Bundles",
                                "product_items": [{"product_retailer_id": "2lc20305pt"}],
                            }
                        ],
                    },
                }
            ],
        }
    ],
    "a catalog button, sub_type in capitals": [
        {
            "type": "button",
            "sub_type": "CATALOG",
            "index": 0,
            "parameters": [
                {"type": "action", "action": {"thumbnail_product_retailer_id": "2lc20305pt"}}
            ],
        }
    ],
    "a flow button": [
        {
            "type": "button",
            "sub_type": "flow",
            "index": "0",
            "parameters": [
                {
                    "type": "action",
                    "action": {"flow_token": "FT_123", "flow_action_data": {"step": "one"}},
                }
            ],
        }
    ],
    # The deepest payload Meta documents: 8 levels inside the component, down to `amount`.
    "an order-details button": [
        {
            "type": "button",
            "sub_type": "order_details",
            "index": 0,
            "parameters": [
                {
                    "type": "action",
                    "action": {
                        "order_details": {
                            "reference_id": "ref-1",
                            "type": "digital-goods",
                            "payment_type": "br",
                            "payment_settings": [
                                {
                                    "type": "pix_dynamic_code",
                                    "pix_dynamic_code": {"code": "000201", "key_type": "CNPJ"},
                                }
                            ],
                            "currency": "BRL",
                            "total_amount": {"value": 50000, "offset": 100},
                            "order": {
                                "status": "pending",
                                "items": [
                                    {
                                        "retailer_id": "1234567",
                                        "name": "Cake",
                                        "amount": {"value": 50000, "offset": 100},
                                        "quantity": 1,
                                    }
                                ],
                                "subtotal": {"value": 50000, "offset": 100},
                            },
                        }
                    },
                }
            ],
        }
    ],
    "a tap target configuration": [
        {
            "type": "tap_target_configuration",
            "parameters": [
                {
                    "type": "tap_target_configuration",
                    "tap_target_configuration": [
                        {"url": "https://x.test/offer", "title": "Offer Details"}
                    ],
                }
            ],
        }
    ],
    "a named body parameter": [
        {
            "type": "BODY",
            "parameters": [{"type": "text", "parameter_name": "first_name", "text": "Ada"}],
        }
    ],
}


def send_template(api, components, **headers):
    body = {
        "phone": PHONE,
        "template": {"name": "t", "language": {"code": "en_US"}, "components": components},
    }
    # json.dumps escapes lone surrogates (\ud800), as any client's JSON encoder does.
    return api.post(
        "/api/send/template", json.dumps(body), content_type="application/json", **headers
    )


def body_text(*texts) -> list[dict]:
    return [{"type": "body", "parameters": [{"type": "text", "text": t} for t in texts]}]


def nested(levels: int, leaf="x") -> dict:
    """An object `levels` objects deep: {"a": {"a": ... leaf}}."""
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def assert_refused(response, field, graph):
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["message"] == "The given data was invalid."
    assert field in body["errors"], body["errors"]
    assert graph.requests == []
    assert not Chat.objects.exists()
    assert not Contact.objects.exists()


@pytest.mark.parametrize("components", DOCUMENTED_COMPONENTS.values(), ids=DOCUMENTED_COMPONENTS)
def test_components_as_meta_documents_them_reach_whatsapp_as_given(
    api, cloud_org, graph, components
):
    response = send_template(api, components)

    assert response.status_code == 200, response.content
    assert graph.requests[0].json["template"]["components"] == components


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Ada\x00", "Null characters are not allowed."),
        ("Ada\ud800", "Surrogate characters are not allowed: U+D800."),
        ("\udfffAda", "Surrogate characters are not allowed: U+DFFF."),
    ],
    ids=["nul", "high-surrogate", "low-surrogate"],
)
def test_text_a_database_cannot_store_is_refused_and_retries_send_nothing(
    api, cloud_org, graph, text, message
):
    responses = [
        send_template(api, body_text("Order 17", text), HTTP_IDEMPOTENCY_KEY="retry-1")
        for _ in range(3)
    ]

    for response in responses:
        assert_refused(response, "template.components.0.parameters.1.text", graph)
        assert response.json()["errors"]["template.components.0.parameters.1.text"] == [message]


@pytest.mark.parametrize(
    ("components", "field"),
    [
        pytest.param(
            [{"type": "body", "parameters": [{"type": "text", "text": "A", "x": ["\x00"]}]}],
            "template.components.0.parameters.0.x.0",
            id="nul-in-an-extra-field",
        ),
        pytest.param(
            [{"type": "body", "parameters": [{"type": "text", "text": "A", "k\x00": 1}]}],
            "template.components.0.parameters.0",
            id="nul-in-a-key",
        ),
        pytest.param(
            [{"type": "body", "\ud800": "x"}],
            "template.components.0",
            id="surrogate-in-a-key",
        ),
        pytest.param(
            [
                {
                    "type": "carousel",
                    "cards": [
                        {
                            "card_index": 0,
                            "components": [
                                {
                                    "type": "header",
                                    "parameters": [{"type": "image", "image": {"id": "1\x00"}}],
                                }
                            ],
                        }
                    ],
                }
            ],
            "template.components.0.cards.0.components.0.parameters.0.image.id",
            id="nul-in-a-carousel-card",
        ),
    ],
)
def test_unstorable_text_anywhere_in_a_component_is_refused(
    api, cloud_org, graph, components, field
):
    assert_refused(send_template(api, components), field, graph)


def test_a_component_nested_500_deep_is_refused_and_the_chats_still_list(api, cloud_org, graph):
    component = {"type": "body", "parameters": [{"type": "text", "text": "A"}], "x": nested(500)}

    responses = [send_template(api, [component], HTTP_IDEMPOTENCY_KEY="deep") for _ in range(2)]

    for response in responses:
        assert_refused(response, "template.components.0.x.a.a.a.a.a.a.a.a", graph)
    assert api.get("/api/chats").status_code == 200


def test_nine_levels_inside_a_component_are_refused(api, cloud_org, graph):
    eight = {"type": "body", "parameters": [{"type": "text", "text": "A"}], "x": nested(7, [])}
    nine = {**eight, "x": nested(8, [])}

    assert send_template(api, [eight]).status_code == 200
    graph.requests.clear()
    Chat.objects.all().delete()
    Contact.objects.all().delete()
    response = send_template(api, [nine])
    assert_refused(response, "template.components.0.x.a.a.a.a.a.a.a.a", graph)
    assert response.json()["errors"]["template.components.0.x.a.a.a.a.a.a.a.a"] == [
        "Nested too deeply: at most 8 levels of objects and lists."
    ]


def components_of_size(size: int) -> list[dict]:
    """A body component whose compact JSON is exactly `size` bytes."""
    components = body_text("")
    padding = size - len(json.dumps(components, separators=(",", ":")).encode())
    return body_text("x" * padding)


def test_components_over_64_kib_are_refused_and_64_kib_are_sent(api, cloud_org, graph):
    assert send_template(api, components_of_size(64 * 1024)).status_code == 200
    graph.requests.clear()
    Chat.objects.all().delete()
    Contact.objects.all().delete()

    response = send_template(api, components_of_size(64 * 1024 + 1))

    assert_refused(response, "template.components", graph)
    assert response.json()["errors"]["template.components"] == [
        "Too large: at most 65536 bytes of JSON; this is 65537."
    ]


@pytest.mark.parametrize(
    ("components", "field"),
    [
        pytest.param([{"type": "footer"}], "template.components.0.type", id="unknown-component"),
        pytest.param([{"type": 7}], "template.components.0.type", id="component-type-number"),
        pytest.param(
            [{"type": "body", "parameters": [{"type": "sticker", "sticker": {}}]}],
            "template.components.0.parameters.0.type",
            id="unknown-parameter",
        ),
        pytest.param(
            [{"type": "body", "parameters": [{"type": "payload"}]}],
            "template.components.0.parameters.0.payload",
            id="parameter-without-its-value",
        ),
        pytest.param(
            [{"type": "button", "index": 0, "parameters": [{"type": "payload", "payload": "p"}]}],
            "template.components.0.sub_type",
            id="button-without-sub-type",
        ),
        pytest.param(
            [{"type": "button", "sub_type": "url", "parameters": [{"type": "text", "text": "p"}]}],
            "template.components.0.index",
            id="button-without-index",
        ),
        pytest.param(
            [{"type": "button", "sub_type": "url", "index": "first"}],
            "template.components.0.index",
            id="button-index-not-a-number",
        ),
        pytest.param(
            [{"type": "button", "sub_type": "url", "index": True}],
            "template.components.0.index",
            id="button-index-boolean",
        ),
        pytest.param(
            [{"type": "carousel", "cards": {"card_index": 0}}],
            "template.components.0.cards",
            id="cards-not-a-list",
        ),
        pytest.param(
            [
                {
                    "type": "carousel",
                    "cards": [{"card_index": 0, "components": [{"type": "carousel"}]}],
                }
            ],
            "template.components.0.cards.0.components.0.type",
            id="carousel-in-a-card",
        ),
        pytest.param(
            [{"type": "carousel", "cards": ["card"]}],
            "template.components.0.cards.0",
            id="card-not-an-object",
        ),
        pytest.param(
            [{"type": "carousel", "cards": [{"components": [{"type": "body"}]}]}],
            "template.components.0.cards.0.card_index",
            id="card-without-card-index",
        ),
    ],
)
def test_shapes_meta_does_not_document_are_refused(api, cloud_org, graph, components, field):
    assert_refused(send_template(api, components), field, graph)


def test_a_number_json_cannot_carry_back_is_refused(api, cloud_org, graph):
    """1e999 parses as infinity, which neither PostgreSQL's jsonb nor a JSON answer can hold."""
    components = [{"type": "body", "parameters": [{"type": "currency", "currency": {}}]}]
    body = json.dumps(
        {
            "phone": PHONE,
            "template": {"name": "t", "language": {"code": "en"}, "components": components},
        }
    ).replace('"currency": {}', '"currency": {"amount_1000": 1e999}')

    response = api.post("/api/send/template", body, content_type="application/json")

    assert_refused(response, "template.components.0.parameters.0.currency.amount_1000", graph)


def test_a_refusal_names_no_character_it_cannot_show(api, cloud_org, graph):
    """The error for an unknown type does not echo the type back: a lone surrogate in
    the answer would make the answer itself impossible to encode."""
    response = send_template(api, [{"type": "\ud800"}])

    assert_refused(response, "template.components.0.type", graph)


def test_a_chat_stored_500_levels_deep_by_older_code_is_still_listed(api, org_a):
    """Older code stored whatever components it was given; such a chat must not make the
    organization's chat list fail for good."""
    deep = {"type": "template", "template": {"components": [nested(500)]}}
    chat = ChatFactory(organization=org_a, metadata=deep)

    listed = api.get("/api/chats")
    shown = api.get(f"/api/chats/{chat.uuid}")

    assert listed.status_code == shown.status_code == 200
    assert json.loads(listed.json()["data"][0]["metadata"]) == deep
    assert json.loads(shown.json()["data"]["metadata"]) == deep
