"""Every body POST /api/contacts/import can be sent answers a JSON error or a 202,
never a 500 (docs/contacts.md): JSON lists past the API's usual 256 KiB, multipart
bodies past Django's limits, cells past the csv module's, and text no database stores."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from contacts.models import Contact, ContactImport
from tests.background import run_tasks

URL = "/api/contacts/import"


def report_of(api, response) -> dict:
    assert response.status_code == 202, response.content
    run_tasks()
    return api.get(f"/api/contacts/imports/{response.json()['data']['uuid']}").json()["data"]


def test_a_json_list_larger_than_the_usual_body_limit_is_imported_whole(api, org_a):
    contacts = [{"phone": f"+4420794{n:05d}", "first_name": "x" * 40} for n in range(6000)]
    body = json.dumps({"contacts": contacts})
    assert len(body) > 256 * 1024
    report = report_of(api, api.post(URL, body, content_type="application/json"))
    assert (report["total"], report["created"], report["failed"]) == (6000, 6000, 0)


def test_a_json_body_past_the_imports_limit_is_a_413(api, settings):
    settings.LARGE_BODY_MAX_SIZE = 1000
    response = api.post(URL, {"contacts": [{"phone": "1" * 2000}]}, format="json")
    assert response.status_code == 413
    assert response.json() == {"statusCode": 413, "message": "The request body is too large."}
    assert not ContactImport.objects.exists()


@pytest.mark.parametrize(
    "contact",
    [
        {"phone": "+14155552671", "first_name": "A\x00na"},
        {"phone": "+14155552671", "ci\x00ty": "Madrid"},
        {"phone": "+1415555\x002671"},
        {"phone": "+14155552671", "city": "\ud800"},
        {"phone": "+1415555\udfff2671"},
        {"phone": "+14155552671", "metadata": {"k\ud800": "v"}},
    ],
    ids=["nul-value", "nul-key", "nul-phone", "surrogate-value", "surrogate-phone", "meta-key"],
)
def test_text_no_database_stores_is_a_row_error(api, org_a, contact):
    good = {"phone": "+14155552672"}
    # json.dumps writes NUL and lone surrogates as \u escapes, as a client would.
    body = json.dumps({"contacts": [contact, good]})
    report = report_of(api, api.post(URL, body, content_type="application/json"))
    assert (report["status"], report["created"], report["failed"]) == ("completed", 1, 1)
    error = report["errors"][0]
    assert error["row"] == 1
    assert error["message"] == "The row holds characters that cannot be stored."
    assert "\x00" not in error["phone"]
    assert list(Contact.objects.values_list("phone", flat=True)) == ["14155552672"]


@pytest.mark.parametrize("value", [["+14155552671"], {"a": 1}, True])
def test_a_field_of_the_wrong_type_is_a_400(api, value):
    response = api.post(URL, {"contacts": [{"phone": value}]}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "contacts": ["The field phone of contact 1 must be text or a number."]
    }
    assert not ContactImport.objects.exists()


def test_a_header_cell_past_the_csv_field_limit_is_a_400(api):
    content = ("phone," + "a" * 140_000 + "\n+14155552671,x\n").encode()
    response = api.post(URL, {"file": SimpleUploadedFile("c.csv", content)}, format="multipart")
    assert response.status_code == 400
    assert response.json()["errors"]["file"] == [
        "The file could not be read as CSV: field larger than field limit (131072)."
    ]
    assert not ContactImport.objects.exists()


def test_multipart_without_a_boundary_says_so(api):
    response = api.generic("POST", URL, b"--x\r\n", content_type="multipart/form-data")
    assert response.status_code == 400
    assert response.json()["message"] == (
        "Malformed form body. A multipart body needs a boundary in its Content-Type."
    )


def test_multipart_with_too_many_fields_is_a_400(api):
    fields = {f"f{n}": "x" for n in range(1100)}
    fields["file"] = SimpleUploadedFile("c.csv", b"phone\n+14155552671\n")
    response = api.post(URL, fields, format="multipart")
    assert response.status_code == 400
    assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in response.json()["message"]
    assert not ContactImport.objects.exists()


def test_multipart_with_too_many_files_is_a_400(api):
    files = {f"f{n}": SimpleUploadedFile("c.csv", b"phone\n") for n in range(120)}
    response = api.post(URL, files, format="multipart")
    assert response.status_code == 400
    assert "DATA_UPLOAD_MAX_NUMBER_FILES" in response.json()["message"]


def test_multipart_fields_past_the_memory_limit_are_a_413(api):
    data = {
        "file": SimpleUploadedFile("c.csv", b"phone\n+14155552671\n"),
        "on_duplicate": "x" * 300_000,
    }
    response = api.post(URL, data, format="multipart")
    assert response.status_code == 413
    assert response.json() == {"statusCode": 413, "message": "The request body is too large."}
    assert not ContactImport.objects.exists()
