"""The admin's contacts import and export: the API's reading of the file, its task and
its export, scoped to the staff member's organization."""

import csv
import io

from django.core.files.uploadedfile import SimpleUploadedFile

from contacts.models import Contact, ContactImport
from tests.background import run_tasks
from tests.factories import ContactFactory, ContactGroupFactory

IMPORT = "/admin/contacts/contact/import/"
EXPORT = "/admin/contacts/contact/export/"


def csv_file(text: str, encoding: str = "utf-8") -> SimpleUploadedFile:
    return SimpleUploadedFile("clients.csv", text.encode(encoding), content_type="text/csv")


def test_staff_import_a_file_and_see_its_progress(admin_a, org_a, org_b):
    group = ContactGroupFactory(organization=org_a, name="Leads")
    page = admin_a.get("/admin/contacts/contact/")
    assert IMPORT.encode() in page.content and EXPORT.encode() in page.content
    assert admin_a.get(IMPORT).status_code == 200
    text = "Nombre;Phone;Email;Ciudad\r\nJosé;+34612345678;;Madrid\r\nMal;+1234;;\r\n"
    response = admin_a.post(
        IMPORT,
        {
            "file": csv_file(
                "First Name;Phone;Email;Ciudad\r\n" + text.split("\r\n", 1)[1], "cp1252"
            ),
            "on_duplicate": "skip",
            "contact_group": group.pk,
        },
    )
    contact_import = ContactImport.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/admin/contacts/contactimport/{contact_import.pk}/change/"
    assert contact_import.organization == org_a
    assert contact_import.created_by > 0
    run_tasks()
    contact = Contact.objects.get(organization=org_a, phone="34612345678")
    assert (contact.first_name, contact.contact_group, contact.metadata) == (
        "José",
        group,
        {"Ciudad": "Madrid"},
    )
    progress = admin_a.get(response["Location"]).content.decode()
    assert "completed" in progress and "+1234" in progress
    assert "The phone must be a valid phone number" in progress


def test_an_unusable_file_is_shown_on_the_form_and_changes_nothing(admin_a, org_a):
    response = admin_a.post(IMPORT, {"file": csv_file("name,email\nAna,a@example.com\n")})
    assert response.status_code == 200
    assert "must name its columns, one of them phone" in response.content.decode()
    assert not ContactImport.objects.exists()


def test_another_organizations_group_cannot_be_chosen(admin_a, org_b):
    other = ContactGroupFactory(organization=org_b)
    response = admin_a.post(
        IMPORT, {"file": csv_file("phone\n+14155552671\n"), "contact_group": other.pk}
    )
    assert response.status_code == 200
    assert not ContactImport.objects.exists()


def test_another_organizations_import_is_a_404(admin_a, org_b):
    other = ContactImport.objects.create(organization=org_b, total=1)
    assert admin_a.get(f"/admin/contacts/contactimport/{other.pk}/change/").status_code == 404


def test_staff_export_their_organizations_contacts(admin_a, org_a, org_b):
    ContactFactory(organization=org_a, first_name="Mine", phone="14155552671")
    ContactFactory(organization=org_b, first_name="Theirs", phone="14155552672")
    response = admin_a.get(EXPORT)
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    assert rows[0][:3] == ["first_name", "last_name", "phone"]
    assert [row[0] for row in rows[1:]] == ["Mine"]


def test_a_superuser_exports_the_organization_chosen(admin_super, org_a, org_b):
    ContactFactory(organization=org_b, first_name="Theirs", phone="14155552672")
    assert admin_super.get(EXPORT).status_code == 302  # which organization?
    response = admin_super.get(f"{EXPORT}?organization={org_b.pk}")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    assert [row[0] for row in rows[1:]] == ["Theirs"]
