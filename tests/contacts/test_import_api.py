"""POST /api/contacts/import and GET /api/contacts/imports/{uuid} ().

The files are written the way spreadsheets write them: Excel's "CSV UTF-8" (a byte-order
mark, CRLF line ends), Excel and LibreOffice in a European locale (semicolons, Windows-1252
/ Latin-1 text), quoted cells holding the delimiter or a line break. The import runs in a
task; run_tasks() runs it here with the worker's own code.
"""

import json

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile

from contacts import importing, imports, services
from contacts.models import Contact, ContactGroup, ContactImport
from events.models import Delivery
from events.services import create_endpoint
from tests.background import run_tasks, tasks
from tests.factories import ContactFactory, ContactGroupFactory

URL = "/api/contacts/import"


def upload(api, content: bytes, name: str = "contacts.csv", **options):
    data = {"file": SimpleUploadedFile(name, content, content_type="text/csv"), **options}
    return api.post(URL, data, format="multipart")


def imported(api, response) -> dict:
    assert response.status_code == 202, response.json()
    data = response.json()["data"]
    assert data["status"] == "pending"
    run_tasks()
    return api.get(f"/api/contacts/imports/{data['uuid']}").json()["data"]


def contacts_of(organization) -> dict[str, Contact]:
    return {c.phone: c for c in Contact.objects.live().filter(organization=organization)}


def test_excel_utf8_file_with_bom_and_crlf_is_imported_with_extra_columns(api, org_a):
    text = (
        "First Name,Last Name,Phone,E-mail,Group,City,Plan\r\n"
        "Ana,García,+34 612 345 678,ana@example.com,Madrid,Madrid,gold\r\n"
        "Jörg,Müller,+49 151 23456789,,Berlin,Berlin,\r\n"
    )
    report = imported(api, upload(api, b"\xef\xbb\xbf" + text.encode()))
    assert report["status"] == "completed"
    assert (report["total"], report["created"], report["failed"]) == (2, 2, 0)
    found = contacts_of(org_a)
    ana = found["34612345678"]
    assert (ana.first_name, ana.last_name, ana.email) == ("Ana", "García", "ana@example.com")
    # `City` is the address's (as the original product's export has it); `Plan` is kept.
    assert ana.metadata == {"Plan": "gold"}
    assert ana.address["city"] == "Madrid"
    assert ana.contact_group.name == "Madrid"
    assert found["4915123456789"].metadata is None
    assert found["4915123456789"].address["city"] == "Berlin"
    assert found["4915123456789"].email is None
    # The record shows the metadata and the address as JSON-encoded strings.
    listed = api.get("/api/contacts").json()["data"]
    assert {json.loads(c["address"])["city"] for c in listed} == {"Madrid", "Berlin"}
    assert [json.loads(c["metadata"]) for c in listed if c["metadata"]] == [{"Plan": "gold"}]
    assert api.get("/api/contacts").json()["meta"]["total"] == 2


def test_semicolons_and_latin1_from_a_european_spreadsheet(api, org_a):
    text = "First_Name;LAST NAME;Phone;Email\r\nJosé;Muñoz;0034612345679;jose@example.es\r\n"
    text += "Zoë;Ø;+34612345680;\r\n"
    report = imported(api, upload(api, text.encode("cp1252")))
    assert report["created"] == 2, report
    found = contacts_of(org_a)
    assert found["34612345679"].first_name == "José"
    assert found["34612345679"].last_name == "Muñoz"
    assert found["34612345680"].first_name == "Zoë"


def test_quoted_cells_hold_delimiters_quotes_and_line_breaks(api, org_a):
    text = (
        "phone,first_name,notes\n"
        '+14155552671,"Smith, John","He said ""call me""\non Mondays"\n'
        "+14155552672,Jane,plain\n"
    )
    report = imported(api, upload(api, text.encode()))
    assert report["created"] == 2
    john = contacts_of(org_a)["14155552671"]
    assert john.first_name == "Smith, John"
    assert john.metadata == {"notes": 'He said "call me"\non Mondays'}


def test_bad_rows_are_reported_and_the_others_imported(api, org_a):
    lines = ["phone,first_name,email"]
    bad = {}
    for n in range(50):
        if n % 5 == 2:  # ten bad rows: five bad phones, five bad emails
            if n % 10 == 2:
                lines.append(f"+1234{n},Bad{n},")  # too short for its country
                bad[len(lines)] = "phone"
            else:
                lines.append(f"+4420794610{n:02d},Bad{n},not-an-email")
                bad[len(lines)] = "email"
        else:
            lines.append(f"+4420794610{n:02d},Good{n},good{n}@example.com")
    report = imported(api, upload(api, "\n".join(lines).encode()))
    assert (report["total"], report["created"], report["failed"]) == (50, 40, 10)
    assert [error["row"] for error in report["errors"]] == sorted(bad)
    for error in report["errors"]:
        word = "phone" if bad[error["row"]] == "phone" else "email"
        assert word in error["message"]
    assert report["errors"][0] == {
        "row": 4,
        "phone": "+12342",
        "message": "The phone must be a valid phone number with its country code.",
    }
    assert len(contacts_of(org_a)) == 40


def test_duplicates_in_the_file_and_in_the_database_are_skipped_by_default(api, org_a):
    ContactFactory(organization=org_a, phone="442079460001", first_name="Kept")
    text = "phone,first_name\n+442079460001,New\n+442079460002,First\n+442079460002,Second\n"
    report = imported(api, upload(api, text.encode()))
    assert (report["created"], report["skipped"], report["updated"]) == (1, 2, 0)
    found = contacts_of(org_a)
    assert found["442079460001"].first_name == "Kept"
    assert found["442079460002"].first_name == "First"


def test_on_duplicate_update_writes_the_rows_values_and_keeps_blank_cells(api, org_a):
    group = ContactGroupFactory(organization=org_a, name="VIP")
    ContactFactory(
        organization=org_a, phone="442079460001", first_name="Old", email="old@example.com"
    )
    text = (
        "phone,first_name,email,tier\n"
        "+442079460001,New,,gold\n+442079460002,First,,\n+442079460002,Second,,silver\n"
    )
    response = upload(api, text.encode(), on_duplicate="update", contact_group=str(group.uuid))
    report = imported(api, response)
    assert (report["created"], report["updated"], report["skipped"]) == (1, 2, 0)
    found = contacts_of(org_a)
    assert found["442079460001"].first_name == "New"
    assert found["442079460001"].email == "old@example.com"  # the blank cell kept it
    assert found["442079460001"].metadata == {"tier": "gold"}
    assert found["442079460002"].first_name == "Second"
    assert {c.contact_group_id for c in found.values()} == {group.pk}


def test_rows_repeating_a_number_update_it_in_the_files_order(api, org_a):
    ContactFactory(
        organization=org_a,
        phone="442079460001",
        first_name="Old",
        last_name="Kept",
        metadata={"plan": "basic", "since": "2020"},
    )
    text = (
        "phone,first_name,email,plan,city\n"
        "+442079460001,One,one@example.com,pro,\n"
        "+442079460001,,,,Leeds\n"
        "+442079460001,Three,,,\n"
    )
    report = imported(api, upload(api, text.encode(), on_duplicate="update"))
    assert (report["created"], report["updated"], report["skipped"]) == (0, 3, 0)
    contact = contacts_of(org_a)["442079460001"]
    assert (contact.first_name, contact.last_name) == ("Three", "Kept")
    assert contact.email == "one@example.com"  # the later blank cells kept it
    assert contact.metadata == {"plan": "pro", "since": "2020"}
    assert contact.address["city"] == "Leeds"  # `city` is the address's


def test_a_json_list_is_imported_like_a_file(api, org_a):
    body = {
        "contacts": [
            {"phone": "+14155552671", "first_name": "Ann", "Company": "Acme"},
            {"Phone Number": 14155552672, "First Name": "Bob", "metadata": {"vip": True}},
            {"phone": "nope", "first_name": "Bad"},
        ],
        "on_duplicate": "skip",
    }
    report = imported(api, api.post(URL, body, format="json"))
    assert (report["created"], report["failed"]) == (2, 1)
    assert report["errors"] == [
        {
            "row": 3,
            "phone": "nope",
            "message": "The phone must be a valid phone number with its country code.",
        }
    ]
    found = contacts_of(org_a)
    assert found["14155552671"].metadata == {"Company": "Acme"}
    assert found["14155552672"].metadata == {"vip": True}


def test_a_json_contact_with_a_field_that_is_not_text_is_refused(api, org_a):
    body = {"contacts": [{"phone": "+14155552671", "first_name": ["Ann"]}]}
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]["contacts"] == [
        "The field first_name of contact 1 must be text or a number."
    ]
    assert not ContactImport.objects.exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", imports.NOT_CSV),
        (b"first_name,email\nAna,ana@example.com\n", imports.NO_PHONE_COLUMN),
        (b"\r\n  \r\n", imports.EMPTY_FILE),
        (b"phone,first_name\n\n", imports.EMPTY_FILE),
        (
            b"phone,Phone Number\n+14155552671,+14155552671\n",
            "The column Phone Number appears twice.",
        ),
        (b'phone,first_name\n"+14155552671,Ann\n', "The file could not be read as CSV"),
    ],
)
def test_an_unusable_file_is_refused_whole(api, org_a, content, message):
    response = upload(api, content)
    assert response.status_code == 400
    body = response.json()
    assert body["message"] == "The given data was invalid."
    assert body["errors"]["file"][0].startswith(message)
    assert not ContactImport.objects.exists()
    assert not tasks().exists()
    assert not Contact.objects.exists()


def test_a_file_over_the_limit_is_refused(api, org_a, monkeypatch):
    monkeypatch.setattr(imports, "MAX_BYTES", 100)
    response = upload(api, b"phone\n" + b"+14155552671\n" * 20)
    assert response.status_code == 400
    assert response.json()["errors"]["file"] == [imports.TOO_LARGE]
    assert not ContactImport.objects.exists()


def test_too_many_rows_are_refused(api, org_a, monkeypatch):
    monkeypatch.setattr(imports, "MAX_ROWS", 3)
    response = upload(api, b"phone\n" + b"+14155552671\n" * 4)
    assert response.status_code == 400
    assert response.json()["errors"]["file"] == [imports.TOO_MANY_ROWS]


def test_options_are_validated(api, api_b, org_b):
    other_group = ContactGroupFactory(organization=org_b)
    response = upload(api, b"phone\n+14155552671\n", contact_group=str(other_group.uuid))
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "contact_group": ["The selected contact group is invalid."]
    }
    response = upload(api, b"phone\n+14155552671\n", on_duplicate="merge")
    assert "on_duplicate" in response.json()["errors"]
    assert api.post(URL, {}, format="json").json()["errors"]["file"]
    assert api.post(URL, {"contacts": "x"}, format="json").json()["errors"]["contacts"]
    assert api.post(URL, {"contacts": [1]}, format="json").json()["errors"]["contacts"]
    assert not ContactImport.objects.exists()


def test_another_organizations_import_is_not_found(api, api_b):
    response = upload(api, b"phone\n+14155552671\n")
    uuid = response.json()["data"]["uuid"]
    assert api.get(f"/api/contacts/imports/{uuid}").status_code == 200
    assert api_b.get(f"/api/contacts/imports/{uuid}").status_code == 404
    assert api.get("/api/contacts/imports/not-a-uuid").status_code == 404


def test_progress_is_shown_while_the_import_runs(api, org_a, monkeypatch):
    monkeypatch.setattr(importing, "IMPORT_BATCH", 2)
    response = upload(api, b"phone\n+14155552671\n+14155552672\n+14155552673\n")
    contact_import = ContactImport.objects.get(uuid=response.json()["data"]["uuid"])
    rows = importing.rows_of(ContactImport.objects.get(pk=contact_import.pk))
    ContactImport.objects.filter(pk=contact_import.pk).update(status="running")
    importing.import_next_batch(contact_import, rows, {})
    report = api.get(f"/api/contacts/imports/{contact_import.uuid}").json()["data"]
    assert (report["status"], report["processed"], report["created"]) == ("running", 2, 2)
    # Run again (a retried task): it carries on, and imports nothing twice.
    assert importing.run_contact_import(import_id=contact_import.pk) == "completed"
    assert importing.run_contact_import(import_id=contact_import.pk) == "completed"
    report = api.get(f"/api/contacts/imports/{contact_import.uuid}").json()["data"]
    assert (report["status"], report["processed"], report["created"]) == ("completed", 3, 3)
    done = ContactImport.objects.get(pk=contact_import.pk)
    assert (done.rows, done.source) == ([], "")


def test_a_file_is_checked_when_it_comes_and_its_rows_made_by_the_task(
    api, org_a, django_capture_on_commit_callbacks
):
    # The request streams the checked file to storage; building 100,000 rows there held
    # the web process's interpreter for seconds, which its other requests waited for.
    text = "\ufeffphone;first_name\r\n+14155552671;Ana\r\n\r\n+14155552672;Bo\r\n"
    response = upload(api, text.encode())
    stored = ContactImport.objects.get(uuid=response.json()["data"]["uuid"])
    assert (stored.rows, stored.source, stored.total) == ([], "", 2)
    assert stored.encoding == "utf-8-sig"
    with default_storage.open(stored.stored_file, "rb") as file:
        assert file.read() == text.encode()  # the file as sent
    with django_capture_on_commit_callbacks(execute=True):
        report = imported(api, response)
    assert (report["created"], report["failed"]) == (2, 0)
    assert contacts_of(org_a)["14155552672"].first_name == "Bo"
    assert not default_storage.exists(stored.stored_file)  # dropped once done


def test_a_latin1_file_is_read_as_latin1_by_the_task(api, org_a):
    text = "phone,first_name\n+14155552671,Jos\xe9\n"
    report = imported(api, upload(api, text.encode("latin-1")))
    assert (report["created"], report["failed"]) == (1, 0)
    assert contacts_of(org_a)["14155552671"].first_name == "José"


def test_a_json_list_is_kept_in_storage_until_the_import_is_done(
    api, org_a, django_capture_on_commit_callbacks
):
    contacts = [{"phone": "+14155552671", "first_name": "Ana"}]
    response = api.post(URL, {"contacts": contacts}, format="json")
    stored = ContactImport.objects.get(uuid=response.json()["data"]["uuid"])
    assert stored.rows == [] and stored.stored_file.endswith(".jsonl")
    assert default_storage.exists(stored.stored_file)
    with django_capture_on_commit_callbacks(execute=True):
        report = imported(api, response)
    assert (report["created"], report["failed"]) == (1, 0)
    assert not default_storage.exists(stored.stored_file)


def test_an_import_emits_one_contacts_imported_event(api, org_a, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    create_endpoint(organization=org_a, url="http://127.0.0.1:9/hook", events=[])
    response = upload(api, b"phone,group\n+14155552671,New\n+14155552672,New\n")
    run_tasks()
    events = [json.loads(d.body) for d in Delivery.objects.order_by("id")]
    kinds = [event["type"] for event in events]
    assert "contact.created" not in kinds
    assert kinds.count("contacts.imported") == 1
    summary = next(e["data"] for e in events if e["type"] == "contacts.imported")
    assert summary["uuid"] == response.json()["data"]["uuid"]
    assert (summary["status"], summary["created"]) == ("completed", 2)
    assert ContactGroup.objects.filter(organization=org_a, name="New").count() == 1


def test_an_import_is_one_request_for_the_rate_limit(api, settings):
    response = upload(api, b"phone\n" + b"".join(b"+1415555%04d\n" % n for n in range(300)))
    assert response.status_code == 202
    assert int(response["X-RateLimit-Remaining"]) == int(response["X-RateLimit-Limit"]) - 1


def test_the_counted_total_stays_exact(api, org_a):
    services.create_contact(organization=org_a, phone="14155552671", first_name="A")
    imported(api, upload(api, b"phone\n+14155552671\n+14155552672\n+14155552673\n"))
    assert api.get("/api/contacts").json()["meta"]["total"] == 3
