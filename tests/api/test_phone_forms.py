"""One number, one form: WhatsApp's wa_id and what clients send become the same digits
(messaging_project/api/phones.py; docs/webhooks.md, "Phone numbers")."""

import pytest

from messaging_project.api.phones import InvalidPhoneNumber, formatted_phone, normalize_phone


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("5215512345678", "525512345678"),  # Mexico, as WhatsApp writes a mobile
        ("+5215512345678", "525512345678"),
        ("+52 1 55 1234 5678", "525512345678"),
        ("+52 55 1234 5678", "525512345678"),
        ("551187654321", "5511987654321"),  # Brazil, an account older than the ninth digit
        ("+55 11 98765-4321", "5511987654321"),
        ("551133334444", "551133334444"),  # a Brazilian landline keeps its eight digits
        ("5491112345678", "5491112345678"),  # Argentina: WhatsApp's form is the mobile form
        ("+541112345678", "541112345678"),  # ... and without the 9 it is a landline
        ("+1 (415) 555-2671", "14155552671"),
    ],
)
def test_each_way_of_writing_a_number_has_one_stored_form(written, stored):
    assert normalize_phone(written) == stored


@pytest.mark.parametrize("written", ["52155123456789", "+52 1", "abc", "+"])
def test_what_is_not_a_number_is_still_refused(written):
    with pytest.raises(InvalidPhoneNumber):
        normalize_phone(written)


def test_the_formatted_number_is_international():
    assert formatted_phone("525512345678") == "+52 55 1234 5678"
    assert formatted_phone("") == ""
