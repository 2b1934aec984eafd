"""GET /api/contacts/export: every live contact of the organization as CSV, streamed and
read from the database a chunk at a time (docs/contacts.md)."""

import csv
import io

from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import StreamingHttpResponse

from contacts import selectors, services
from contacts.models import Contact
from tests.background import run_tasks
from tests.factories import ContactFactory, ContactGroupFactory


def rows_of(response) -> list[list[str]]:
    """The export's rows, once its UTF-8 byte-order mark (for Excel) is checked."""
    assert isinstance(response, StreamingHttpResponse)
    content = b"".join(response.streaming_content)
    assert content.startswith(b"\xef\xbb\xbf")
    text = content.decode("utf-8-sig")
    return list(csv.reader(io.StringIO(text, newline="")))


HEADER = [
    "first_name",
    "last_name",
    "phone",
    "email",
    "group",
    "street",
    "city",
    "state",
    "zip",
    "country",
    "is_favorite",
    "opted_out",
    "metadata",
]
NO_ADDRESS = ["", "", "", "", ""]


def test_the_export_holds_every_live_contact_of_the_organization(api, org_a, org_b):
    group = ContactGroupFactory(organization=org_a, name="Clients, old")
    ContactFactory(
        organization=org_a,
        first_name='Ann "A"',
        last_name="Lee",
        phone="14155552671",
        email="ann@example.com",
        contact_group=group,
        metadata={"City": "Oakland"},
    )
    ContactFactory(
        organization=org_a, first_name="Bo", last_name=None, phone="14155552672", email=None
    )
    gone = ContactFactory(organization=org_a, phone="14155552673")
    services.delete_contact(contact=gone)
    ContactFactory(organization=org_b, phone="14155552674")
    response = api.get("/api/contacts/export")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="contacts.csv"'
    assert rows_of(response) == [
        HEADER,
        ['Ann "A"', "Lee", "+14155552671", "ann@example.com", "Clients, old"]
        + NO_ADDRESS
        + ["0", "0", '{"City":"Oakland"}'],
        ["Bo", "", "+14155552672", "", ""] + NO_ADDRESS + ["0", "0", ""],
    ]


def test_the_export_reads_the_contacts_a_chunk_a_query(
    api, org_a, monkeypatch, django_assert_num_queries
):
    ContactFactory.create_batch(7, organization=org_a)
    real = selectors.export_rows
    monkeypatch.setattr(
        selectors,
        "export_rows",
        lambda organization_id: real(organization_id=organization_id, chunk=3),
    )
    response = api.get("/api/contacts/export")
    with django_assert_num_queries(3) as queries:  # 3 + 3 + 1 rows
        rows = rows_of(response)
    assert len(rows) == 8
    assert all("OFFSET" not in query["sql"].upper() for query in queries.captured_queries)
    assert '"id" > ' in queries.captured_queries[1]["sql"]


def test_an_export_imports_back_as_it_was(api, api_b, org_b):
    ContactFactory(
        organization=api.organization,
        first_name="Zoë",
        phone="34612345678",
        email="z@example.es",
        metadata={"Plan": "gold", "Notes": "line one\nline two"},
        contact_group=ContactGroupFactory(organization=api.organization, name="Madrid"),
    )
    exported = b"".join(api.get("/api/contacts/export").streaming_content)
    response = api_b.post(
        "/api/contacts/import",
        {"file": SimpleUploadedFile("contacts.csv", exported)},
        format="multipart",
    )
    assert response.status_code == 202
    run_tasks()
    assert rows_of(api_b.get("/api/contacts/export")) == rows_of(api.get("/api/contacts/export"))


def test_formula_cells_are_marked_as_text_and_import_back_unmarked(api, api_b, org_b):
    group = ContactGroupFactory(organization=api.organization, name="@SUM(A1)")
    formulas = {
        "14155552671": ('=HYPERLINK("http://x")', "+1+2"),
        "14155552672": ("-2+3", "\tTab"),
        "14155552673": ("O'Neil", "'plain quote"),
    }
    for phone, (first, last) in formulas.items():
        ContactFactory(
            organization=api.organization,
            phone=phone,
            first_name=first,
            last_name=last,
            email=None,
            metadata={"note": "=1+1"},
            contact_group=group,
        )
    exported = rows_of(api.get("/api/contacts/export"))
    assert exported[1][:5] == ['\'=HYPERLINK("http://x")', "'+1+2", "+14155552671", "", "'@SUM(A1)"]
    assert exported[2][:2] == ["'-2+3", "'\tTab"]
    assert exported[3][:2] == ["O'Neil", "'plain quote"]  # no formula: as they are
    assert exported[1][12] == '{"note":"=1+1"}'  # an object, starting with {
    content = b"".join(api.get("/api/contacts/export").streaming_content)
    response = api_b.post(
        "/api/contacts/import",
        {"file": SimpleUploadedFile("contacts.csv", content)},
        format="multipart",
    )
    assert response.status_code == 202
    run_tasks()
    imported = {
        c.phone: (c.first_name, c.last_name, c.contact_group.name, c.metadata)
        for c in Contact.objects.filter(organization=org_b).select_related("contact_group")
    }
    assert imported == {
        phone: (first, last, "@SUM(A1)", {"note": "=1+1"})
        for phone, (first, last) in formulas.items()
    }
    assert rows_of(api_b.get("/api/contacts/export")) == exported
