"""The OpenAPI schema and Swagger UI: public, offline, and describing what the API does.
(That every real response matches the schema is tests/hardening/test_fuzzing.py's job.)"""

import pytest
from django.contrib.staticfiles import finders
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema():
    return APIClient().get("/api/schema").json()


def response_schema(schema, path, method, status):
    content = schema["paths"][path][method]["responses"][str(status)]["content"]
    ref = content["application/json"]["schema"]["$ref"]
    return schema["components"]["schemas"][ref.rsplit("/", 1)[1]]


def component(schema, name):
    return schema["components"]["schemas"][name]


def test_the_schema_needs_no_token_and_is_json_or_yaml():
    client = APIClient()
    response = client.get("/api/schema")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["info"]["version"] == "1.0.0"
    yaml = client.get("/api/schema?format=yaml")
    assert yaml.status_code == 200 and yaml.content.startswith(b"openapi: 3")


def test_an_invalid_token_does_not_stop_the_schema():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer nonsense")
    assert client.get("/api/schema").status_code == 200


def test_swagger_ui_is_served_from_our_own_static_files():
    page = APIClient().get("/api/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower()  # works offline
    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")


def test_every_operation_takes_the_bearer_token(schema):
    assert schema["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
    }
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation["security"] == [{"bearerAuth": []}], (method, path)
            assert "401" in operation["responses"] and "429" in operation["responses"]


def test_the_webhook_is_not_part_of_the_bearer_api(schema):
    assert not [path for path in schema["paths"] if path.startswith("/webhooks")]


def test_paths_are_written_as_api_md_writes_them(schema):
    assert "/api/contacts" in schema["paths"] and "/api/contacts/{uuid}" in schema["paths"]
    assert "/api/send" in schema["paths"] and "/api/send/template" in schema["paths"]


def test_lists_are_laravel_pages_of_the_resource(schema):
    page = response_schema(schema, "/api/contacts", "get", 200)
    assert page["required"] == ["data", "links", "meta"]
    assert page["properties"]["data"]["items"]["$ref"].endswith("/ContactRecord")
    meta = component(schema, "PageMeta")
    assert set(meta["required"]) == {
        "current_page",
        "from",
        "last_page",
        "links",
        "path",
        "per_page",
        "to",
        "total",
    }
    parameters = {p["name"] for p in schema["paths"]["/api/contacts"]["get"]["parameters"]}
    assert {"page", "per_page", "search", "ordering", "contact_group", "is_favorite"} <= parameters


def test_details_and_writes_have_their_own_shapes(schema):
    detail = response_schema(schema, "/api/contacts/{uuid}", "get", 200)
    assert detail["properties"]["data"]["$ref"].endswith("/ContactRecord")
    write = response_schema(schema, "/api/contacts", "post", 200)
    assert set(write["required"]) == {"statusCode", "id", "message"}
    assert "404" in schema["paths"]["/api/contacts/{uuid}"]["put"]["responses"]


def test_canned_replies_are_sent_in_one_form_and_stored_in_another(schema):
    request = component(schema, "CannedReplyInputRequest")
    assert set(request["required"]) == {
        "name",
        "trigger",
        "match_criteria",
        "response_type",
        "response",
    }
    record = component(schema, "CannedReplyRecord")
    assert "metadata" in record["properties"] and "response" not in record["properties"]


def test_an_edit_requires_no_field(schema):
    body = schema["paths"]["/api/contacts/{uuid}"]["put"]["requestBody"]["content"]
    edit = component(schema, body["application/json"]["schema"]["$ref"].rsplit("/", 1)[1])
    assert "required" not in edit
    assert component(schema, "ContactInputRequest")["required"] == ["first_name", "phone"]


def test_sends_document_the_channel_failures(schema):
    responses = schema["paths"]["/api/send"]["post"]["responses"]
    assert {"200", "400", "401", "403", "413", "415", "422", "429", "502", "504"} <= set(responses)
    failure = response_schema(schema, "/api/send", "post", 502)
    assert "channel_error" in failure["required"]
    send = response_schema(schema, "/api/send/template", "post", 200)
    assert send["properties"]["data"]["$ref"].endswith("/TemplateSendOutcome")


def test_errors_share_one_envelope(schema):
    assert set(component(schema, "Error")["required"]) == {"statusCode", "message"}
    validation = component(schema, "ValidationError")
    assert "errors" in validation["properties"]
    limited = schema["paths"]["/api/contacts"]["get"]["responses"]["429"]["headers"]
    assert "Retry-After" in limited
