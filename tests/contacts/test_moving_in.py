"""Contacts moving in from the original product (docs/migrating.md): its export (an
`.xlsx` workbook, the columns of app/Exports/ContactsExport.php) imports as it is, with
groups and addresses; our export reads back, in another organization, as the same
contacts, groups, addresses, favourites and opt-outs. Bad workbooks are a 400 (what the
request sees: the size, the zip's directory), the import's failure (what only reading
the sheet shows, which the task does) or row errors, never a 500."""

import csv
import io
import zipfile

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from openpyxl import Workbook

from contacts import imports, workbooks
from contacts.models import Contact, ContactGroup, ContactImport
from tests.background import run_tasks, tasks
from tests.factories import ContactFactory, ContactGroupFactory

pytestmark = pytest.mark.django_db

URL = "/api/contacts/import"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
# The original's export header (app/Exports/ContactsExport.php), a custom field last;
# its phone is the contact's formatted_phone_number.
ORIGINAL_HEADER = [
    "First name",
    "Last name",
    "Phone",
    "Email",
    "Group name",
    "Street",
    "City",
    "State",
    "Zip",
    "Country",
    "Gender",
]
ORIGINAL_ROWS = [
    ["Ana", "García", "+34 612 34 56 78", "ana@example.com", "Madrid", "Gran Vía 1", "Madrid",
     "Madrid", "28013", "Spain", "F"],
    ["John", "Doe", "+1 415-555-2671", None, "VIP", None, "San Francisco", "CA", "94103",
     "United States", None],
    ["Lee", None, "+1 415-555-2672", None, None, None, None, None, None, None, None],
]  # fmt: skip


def upload(api, content: bytes, name: str, content_type: str = "text/csv", **options):
    data = {"file": SimpleUploadedFile(name, content, content_type=content_type), **options}
    return api.post(URL, data, format="multipart")


def imported(api, response) -> dict:
    assert response.status_code == 202, response.json()
    run_tasks()
    return api.get(f"/api/contacts/imports/{response.json()['data']['uuid']}").json()["data"]


def workbook(rows: list[list], *, sheets: int = 1) -> bytes:
    """A real `.xlsx` file, written by openpyxl as the original's export is (its rows on
    the first sheet; other sheets hold something else)."""
    book = Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    for number in range(1, sheets):
        book.create_sheet(f"Other {number}").append(["not", "contacts"])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def csv_bytes(rows: list[list]) -> bytes:
    text = io.StringIO()
    csv.writer(text).writerows([[cell or "" for cell in row] for row in rows])
    return text.getvalue().encode()


def check_the_originals_contacts(organization) -> None:
    found = {c.phone: c for c in Contact.objects.live().filter(organization=organization)}
    assert set(found) == {"34612345678", "14155552671", "14155552672"}
    ana = found["34612345678"]
    assert ana.contact_group.name == "Madrid"
    assert ana.address == {
        "street": "Gran Vía 1",
        "city": "Madrid",
        "state": "Madrid",
        "zip": "28013",
        "country": "Spain",
    }
    assert ana.metadata == {"Gender": "F"}
    john = found["14155552671"]
    assert john.contact_group.name == "VIP"
    assert john.address["city"] == "San Francisco" and john.address["street"] is None
    lee = found["14155552672"]
    assert lee.contact_group is None and lee.address is None


def test_the_originals_export_as_csv_keeps_groups_and_addresses(api, org_a):
    existing = ContactGroupFactory(organization=org_a, name="VIP")
    report = imported(api, upload(api, csv_bytes([ORIGINAL_HEADER, *ORIGINAL_ROWS]), "c.csv"))
    assert (report["created"], report["failed"]) == (3, 0), report
    check_the_originals_contacts(org_a)
    # A group that exists is joined; a missing one is created once.
    assert Contact.objects.get(phone="14155552671").contact_group == existing
    assert ContactGroup.objects.filter(organization=org_a).count() == 2


@pytest.mark.parametrize("name", ["group_name", "Group Name", "group"])
def test_each_name_of_the_group_column(api, org_a, name):
    content = csv_bytes([["phone", name], ["+14155552671", "Clients"]])
    assert imported(api, upload(api, content, "c.csv"))["created"] == 1
    assert Contact.objects.get().contact_group.name == "Clients"


def test_the_originals_xlsx_export_imports_like_its_csv(api, org_a):
    content = workbook([ORIGINAL_HEADER, *ORIGINAL_ROWS], sheets=2)
    report = imported(api, upload(api, content, "contacts.xlsx", XLSX))
    assert (report["total"], report["created"], report["failed"]) == (3, 3, 0), report
    check_the_originals_contacts(org_a)


def test_workbook_cells_typed_as_numbers_dates_and_blank_rows(api, org_a):
    rows = [
        ["phone", "first_name", "Customer since", "Visits"],
        [14155552671, "Ada", None, 3],
        [None, None, None, None],  # a blank row
        [14155552672.0, "Bo", None, 2.5],
    ]
    report = imported(api, upload(api, workbook(rows), "book.xlsx", XLSX))
    assert (report["total"], report["created"]) == (2, 2), report
    found = {c.phone: c for c in Contact.objects.filter(organization=org_a)}
    assert found["14155552671"].metadata == {"Visits": "3"}
    assert found["14155552672"].metadata == {"Visits": "2.5"}


def test_a_workbook_is_known_by_its_content_whatever_its_name(api, org_a):
    content = workbook([["phone"], ["+14155552671"]])
    assert imported(api, upload(api, content, "contacts.csv"))["created"] == 1


def refusal(api, content: bytes, name: str = "contacts.xlsx") -> str:
    response = upload(api, content, name, XLSX)
    assert response.status_code == 400, response.content
    assert not Contact.objects.exists()
    return response.json()["errors"]["file"][0]


def test_a_file_named_xlsx_that_is_no_workbook_is_a_400(api, org_a):
    assert refusal(api, b"phone\n+14155552671\n") == imports.NOT_A_WORKBOOK


def test_a_zip_that_is_no_workbook_is_a_400(api, org_a):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "hello")
    assert refusal(api, buffer.getvalue()) == imports.NOT_A_WORKBOOK


def test_a_workbook_cut_short_is_a_400(api, org_a):
    content = workbook([["phone"], ["+14155552671"]])
    # The zip's directory is at its end: gone, the request sees it.
    assert refusal(api, content[: len(content) // 2]) == imports.NOT_A_WORKBOOK


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    return django_capture_on_commit_callbacks


def failure(api, content: bytes, on_commit) -> str:
    """What the import's status says of a workbook the request took and its task could
    not import: `failed`, with one error for the file as a whole; nothing imported, the
    stored workbook deleted (on commit: `on_commit` runs those callbacks)."""
    response = upload(api, content, "contacts.xlsx", XLSX)
    assert response.status_code == 202, response.content
    stored = ContactImport.objects.get(uuid=response.json()["data"]["uuid"]).stored_file
    with on_commit(execute=True):
        report = imported(api, response)
    assert report["status"] == "failed", report
    assert (report["total"], report["processed"], report["created"]) == (0, 0, 0)
    [error] = report["errors"]
    assert (error["row"], error["phone"]) == (0, "")
    assert not Contact.objects.exists()
    assert not default_storage.exists(stored)
    return error["message"]


def test_the_request_stores_a_workbook_as_sent_and_leaves_its_sheet_to_the_task(api, org_a):
    # The sheet has no header: only reading it shows that, and the request answers 202,
    # so it did not read it (100,000 rows took openpyxl 41 s, near nginx's timeout).
    content = workbook([["+14155552671", "Ada"]])
    response = upload(api, content, "contacts.xlsx", XLSX)
    assert response.status_code == 202, response.content
    assert response.json()["data"]["status"] == "pending"
    stored = ContactImport.objects.get(uuid=response.json()["data"]["uuid"])
    assert (stored.status, stored.total, stored.encoding) == ("pending", 0, "")
    assert stored.stored_file.endswith(".xlsx")
    with default_storage.open(stored.stored_file, "rb") as file:
        assert file.read() == content  # the workbook itself, not a CSV made of it
    [task] = tasks("contacts.tasks.run_contact_import")
    assert task.status == "READY" and task.args_kwargs["args"] == [stored.pk]


def test_a_workbook_whose_sheet_is_damaged_fails_its_import(api, org_a, on_commit):
    # The zip's directory is whole, its sheet's XML cut short: only the task reads it.
    good = zipfile.ZipFile(io.BytesIO(workbook([["phone"], ["+14155552671"]])))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for part in good.infolist():
            data = good.read(part)
            if part.filename == "xl/worksheets/sheet1.xml":
                data = data[: len(data) // 2]
            archive.writestr(part, data)
    assert failure(api, buffer.getvalue(), on_commit) == imports.NOT_A_WORKBOOK


def test_a_workbook_without_a_header_fails_its_import(api, org_a, on_commit):
    assert failure(api, workbook([["+14155552671", "Ada"]]), on_commit) == imports.NO_PHONE_COLUMN


def test_an_empty_workbook_fails_its_import(api, org_a, on_commit):
    assert failure(api, workbook([]), on_commit) == imports.EMPTY_FILE


def test_a_workbook_naming_a_column_twice_fails_with_the_columns_name(api, org_a, on_commit):
    rows = [["phone", "Email", "E-mail"], ["+14155552671", "a@example.com", "b@example.com"]]
    assert failure(api, workbook(rows), on_commit) == "The column E-mail appears twice."


def test_a_zip_bomb_is_refused_before_it_is_unpacked(api, org_a, monkeypatch):
    """A part that declares more than the limit unpacked is refused from the zip's
    directory alone; the limit is lowered here so that the test writes little."""
    monkeypatch.setattr(workbooks, "MAX_UNPACKED", 1024 * 1024)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", b"<Types/>")
        archive.writestr("xl/worksheets/sheet1.xml", b"\0" * (2 * 1024 * 1024))
    assert len(buffer.getvalue()) < 10_000  # a bomb: tiny packed
    assert refusal(api, buffer.getvalue()) == imports.WORKBOOK_TOO_LARGE


def test_a_workbook_of_too_many_parts_is_refused(api, org_a, monkeypatch):
    monkeypatch.setattr(workbooks, "MAX_PARTS", 5)
    assert refusal(api, workbook([["phone"], ["+14155552671"]])) == imports.WORKBOOK_TOO_MANY_PARTS


def test_a_huge_sheet_fails_its_import_as_a_huge_csv_is_refused(api, org_a, monkeypatch, on_commit):
    monkeypatch.setattr(imports, "MAX_ROWS", 3)
    rows = [["phone"], *([f"+1415555{index:04d}"] for index in range(4))]
    assert failure(api, workbook(rows), on_commit) == imports.TOO_MANY_ROWS


def test_a_workbook_larger_than_an_upload_may_be_is_refused(api, org_a, monkeypatch):
    monkeypatch.setattr(imports, "MAX_BYTES", 100)
    assert refusal(api, workbook([["phone"], ["+14155552671"]])) == imports.TOO_LARGE


def test_bad_cells_of_a_workbook_are_row_errors(api, org_a):
    rows = [
        ["phone", "email", "opted_out"],
        ["not a phone", None, None],
        ["+14155552671", "not an email", None],
        ["+14155552672", None, "maybe"],
        ["+14155552673", None, "yes"],
    ]
    report = imported(api, upload(api, workbook(rows), "book.xlsx", XLSX))
    assert (report["created"], report["failed"]) == (1, 3), report
    assert [error["row"] for error in report["errors"]] == [2, 3, 4]
    assert report["errors"][2]["message"] == (
        "is_favorite and opted_out must be 1 or 0 (true or false, yes or no), or blank."
    )
    assert Contact.objects.get().opted_out is True


# The export reads back -----------------------------------------------------------------


def export_of(api) -> bytes:
    return b"".join(api.get("/api/contacts/export").streaming_content)


def snapshot(organization) -> list[tuple]:
    return sorted(
        (
            c.phone,
            c.first_name,
            c.last_name,
            c.email,
            c.contact_group.name if c.contact_group else None,
            c.address,
            c.is_favorite,
            c.opted_out,
            c.metadata,
        )
        for c in Contact.objects.live().filter(organization=organization)
    )


def test_the_export_imported_elsewhere_gives_the_same_contacts(api, api_b, org_a, org_b):
    vip = ContactGroupFactory(organization=org_a, name="VIP — São Paulo")
    ContactFactory(
        organization=org_a,
        phone="5511987654321",
        first_name="João",
        last_name="Ñandú",
        email="joao@example.com",
        contact_group=vip,
        address={"street": "Rua Augusta 1", "city": "São Paulo", "state": "SP",
                 "zip": "01305-000", "country": "Brasil"},
        is_favorite=True,
        metadata={"Plano": "ouro", "Notas": "línea uno\nlínea dos"},
    )  # fmt: skip
    ContactFactory(
        organization=org_a,
        phone="14155552671",
        first_name="Ada",
        email=None,
        opted_out=True,
        address={"street": None, "city": "London", "state": None, "zip": None, "country": None},
    )
    ContactFactory(organization=org_a, phone="14155552672", first_name="=1+1", email=None)
    exported = export_of(api)
    assert exported.startswith(b"\xef\xbb\xbf")
    assert b"\\u" not in exported  # text as text: no JSON escapes in any cell
    assert "São Paulo".encode() in exported and "línea".encode() in exported
    report = imported(api_b, upload(api_b, exported, "contacts.csv"))
    assert (report["created"], report["failed"]) == (3, 0), report
    assert snapshot(org_b) == snapshot(org_a)
    assert ContactGroup.objects.get(organization=org_b).name == "VIP — São Paulo"
    # And once more through the import's other door, as the original's users would.
    rows = list(csv.reader(io.StringIO(exported.decode("utf-8-sig"), newline="")))
    assert rows[0][5:12] == [
        "street",
        "city",
        "state",
        "zip",
        "country",
        "is_favorite",
        "opted_out",
    ]


def test_an_update_import_opts_out_but_never_back_in(api, org_a):
    out = ContactFactory(organization=org_a, phone="14155552671", opted_out=True)
    inside = ContactFactory(organization=org_a, phone="14155552672", is_favorite=True)
    content = csv_bytes(
        [
            ["phone", "opted_out", "is_favorite", "city"],
            ["+14155552671", "0", "1", "Porto"],
            ["+14155552672", "1", "", ""],
        ]
    )
    report = imported(api, upload(api, content, "c.csv", on_duplicate="update"))
    assert report["updated"] == 2, report
    out.refresh_from_db()
    inside.refresh_from_db()
    assert (out.opted_out, out.is_favorite, out.address["city"]) == (True, True, "Porto")
    assert (inside.opted_out, inside.is_favorite) == (True, True)


def test_an_update_import_merges_the_address_parts_it_gives(api, org_a):
    contact = ContactFactory(
        organization=org_a,
        phone="14155552671",
        address={"street": "1 Main St", "city": "Springfield", "state": None, "zip": None,
                 "country": "US"},
    )  # fmt: skip
    content = csv_bytes([["phone", "city", "zip"], ["+14155552671", "Shelbyville", "12345"]])
    imported(api, upload(api, content, "c.csv", on_duplicate="update"))
    contact.refresh_from_db()
    assert contact.address == {
        "street": "1 Main St",
        "city": "Shelbyville",
        "state": None,
        "zip": "12345",
        "country": "US",
    }


def test_a_json_import_takes_the_address_and_the_flags(api, org_a):
    body = {
        "contacts": [
            {
                "phone": "+14155552671",
                "address": {"city": "Lisbon", "country": "Portugal"},
                "is_favorite": True,
                "opted_out": False,
            },
            {"phone": "+14155552672", "street": "Rua 1", "opted_out": "yes"},
        ]
    }
    report = imported(api, api.post(URL, body, format="json"))
    assert report["created"] == 2, report
    found = {c.phone: c for c in Contact.objects.filter(organization=org_a)}
    first = found["14155552671"]
    assert (first.address["city"], first.is_favorite, first.opted_out) == ("Lisbon", True, False)
    assert found["14155552672"].address["street"] == "Rua 1"
    assert found["14155552672"].opted_out is True
