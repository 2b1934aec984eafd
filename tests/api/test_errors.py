"""The error envelope and status codes of docs/api.md."""

import gzip
import json
import logging
import uuid

import pytest
from rest_framework.test import APIClient

from accounts import services as account_services
from contacts import services as contact_services
from tests.factories import ContactFactory


def body(response):
    return json.loads(response.content)


@pytest.mark.django_db
class TestAuthentication:
    def test_missing_header_is_401_missing(self):
        response = APIClient().get("/api/contacts")
        assert response.status_code == 401
        assert body(response) == {
            "statusCode": 401,
            "message": "Unauthorized. Bearer Token is missing.",
            "error": "Unauthorized. Bearer Token is missing.",  # as the original product
        }
        assert response["WWW-Authenticate"] == "Bearer"

    def test_other_scheme_is_401_missing(self):
        response = APIClient().get("/api/contacts", HTTP_AUTHORIZATION="Basic dXNlcjpwYXNz")
        assert body(response)["message"] == "Unauthorized. Bearer Token is missing."

    @pytest.mark.parametrize(
        "header",
        [
            "Bearer nonsense",
            "Bearer",
            "Bearer a b",
            "Bearer wam_000000000000_" + "A" * 43,
            "Bearer wam_ünïcode",
        ],
    )
    def test_malformed_or_unknown_token_is_401_invalid(self, header):
        response = APIClient().get("/api/contacts", HTTP_AUTHORIZATION=header)
        assert response.status_code == 401
        assert body(response) == {
            "statusCode": 401,
            "message": "Unauthorized. Invalid Bearer Token.",
            "error": "Unauthorized. Invalid Bearer Token.",
        }
        assert response["WWW-Authenticate"] == "Bearer"

    def test_right_prefix_with_wrong_secret_is_401(self, org_a):
        issued = account_services.issue_token(organization=org_a)
        forged = issued.token[:-4] + ("AAAA" if not issued.token.endswith("AAAA") else "BBBB")
        response = APIClient().get("/api/contacts", HTTP_AUTHORIZATION=f"Bearer {forged}")
        assert response.status_code == 401

    def test_revoked_token_is_401(self, org_a):
        issued = account_services.issue_token(organization=org_a)
        client = APIClient(HTTP_AUTHORIZATION=f"Bearer {issued.token}")
        assert client.get("/api/contacts").status_code == 200
        account_services.revoke_token(token=issued.record)
        response = client.get("/api/contacts")
        assert response.status_code == 401
        assert body(response)["message"] == "Unauthorized. Invalid Bearer Token."

    def test_scheme_is_case_insensitive(self, org_a):
        issued = account_services.issue_token(organization=org_a)
        response = APIClient().get("/api/contacts", HTTP_AUTHORIZATION=f"bearer {issued.token}")
        assert response.status_code == 200

    def test_token_is_stored_only_as_prefix_and_digest(self, org_a):
        issued = account_services.issue_token(organization=org_a, name="ci")
        record = issued.record
        stored = " ".join(str(value) for value in record.__dict__.values())
        secret = issued.token.split("_", 2)[2]
        assert secret not in stored
        assert record.prefix in issued.token
        assert len(record.digest) == 64

    def test_last_used_is_written_once_a_minute_not_per_request(
        self, org_a, django_assert_num_queries
    ):
        issued = account_services.issue_token(organization=org_a)
        client = APIClient(HTTP_AUTHORIZATION=f"Bearer {issued.token}")
        with django_assert_num_queries(3):  # token, last-used update, the (empty) page
            client.get("/api/contacts")
        with django_assert_num_queries(2):  # token, page: no write this time
            client.get("/api/contacts")
        issued.record.refresh_from_db()
        assert issued.record.last_used_at is not None


@pytest.mark.django_db
class TestErrors:
    def test_malformed_json_is_400_and_creates_nothing(self, api):
        response = api.post("/api/contacts", data="{bad", content_type="application/json")
        assert response.status_code == 400
        assert body(response) == {"statusCode": 400, "message": "Malformed JSON body."}
        assert api.get("/api/contacts").json()["meta"]["total"] == 0

    @pytest.mark.parametrize("payload", ["[1, 2]", '"text"', "42", "null", "[" * 100000])
    def test_json_that_is_not_an_object_is_400(self, api, payload):
        response = api.post("/api/contacts", data=payload, content_type="application/json")
        assert response.status_code == 400
        assert body(response)["message"] == "Malformed JSON body."

    def test_invalid_utf8_is_400(self, api):
        response = api.post("/api/contacts", data=b'{"a": "\xff"}', content_type="application/json")
        assert response.status_code == 400

    def test_other_content_types_are_415(self, api):
        response = api.post("/api/contacts", data="first_name=x", content_type="text/plain")
        assert response.status_code == 415
        assert body(response)["statusCode"] == 415

    def test_validation_failure_lists_fields(self, api):
        response = api.post("/api/contacts", {}, format="json")
        assert response.status_code == 400
        assert body(response) == {
            "statusCode": 400,
            "message": "The given data was invalid.",
            "errors": {
                "first_name": ["This field is required."],
                "phone": ["This field is required."],
            },
        }

    def test_unknown_path_under_api_is_json_404(self, api):
        for path in ("/api/nothing", "/api/contacts/x/y", "/api/"):
            response = api.get(path)
            assert response.status_code == 404, path
            assert body(response) == {"statusCode": 404, "message": "Not found."}

    def test_unknown_path_post_is_json_404_not_csrf_403(self):
        response = APIClient(enforce_csrf_checks=True).post("/api/nothing", {}, format="json")
        assert response.status_code == 404

    @pytest.mark.parametrize("suffix", ["not-a-uuid", str(uuid.uuid4()), "1"])
    def test_unknown_or_malformed_uuid_is_404(self, api, suffix):
        for method in ("get", "put", "delete"):
            response = getattr(api, method)(f"/api/contacts/{suffix}", {}, format="json")
            assert response.status_code == 404
            assert body(response) == {"statusCode": 404, "message": "Not found."}

    def test_wrong_method_is_405(self, api):
        response = api.delete("/api/contacts")
        assert response.status_code == 405
        assert body(response)["statusCode"] == 405

    def test_unexpected_error_is_a_logged_json_500(self, api, monkeypatch, caplog):
        def explode(**kwargs):
            raise RuntimeError("boom")

        monkeypatch.setattr(contact_services, "create_contact", explode)
        api.raise_request_exception = False
        with caplog.at_level(logging.ERROR):
            response = api.post(
                "/api/contacts", {"first_name": "A", "phone": "+14155552671"}, format="json"
            )
        assert response.status_code == 500
        assert body(response) == {"statusCode": 500, "message": "Server Error"}
        assert "boom" not in response.content.decode()
        assert any("Unexpected error" in record.message for record in caplog.records)


@pytest.mark.django_db
class TestHeaders:
    def test_success_headers(self, api):
        response = api.get("/api/contacts")
        assert response["Content-Type"] == "application/json"
        assert response["Cache-Control"] == "no-cache, private"
        assert response["Access-Control-Allow-Origin"] == "*"
        assert response["X-RateLimit-Limit"] == "60"
        assert response["X-RateLimit-Remaining"] == "59"

    def test_authenticated_errors_carry_rate_limit_headers(self, api):
        response = api.get(f"/api/contacts/{uuid.uuid4()}")
        assert response.status_code == 404
        assert response["X-RateLimit-Remaining"] == "59"

    def test_gzip_when_accepted(self, api, org_a):
        for _ in range(5):
            ContactFactory(organization=org_a)
        response = api.get("/api/contacts", HTTP_ACCEPT_ENCODING="gzip")
        assert response["Content-Encoding"] == "gzip"
        assert "Accept-Encoding" in response["Vary"]
        assert json.loads(gzip.decompress(response.content))["meta"]["total"] == 5

    def test_cors_preflight_needs_no_token(self):
        response = APIClient().options(
            "/api/contacts",
            HTTP_ORIGIN="https://app.example.com",
            HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        )
        assert response.status_code == 204
        assert "Authorization" in response["Access-Control-Allow-Headers"]
        assert response["Access-Control-Allow-Origin"] == "*"

    def test_admin_pages_are_not_touched(self, client):
        response = client.get("/admin/login/", HTTP_ACCEPT_ENCODING="gzip")
        assert "Content-Encoding" not in response
        assert "Access-Control-Allow-Origin" not in response
