"""One number, one form: WhatsApp's wa_id and what clients send become the same digits
(messaging_project/core/phones.py; docs/webhooks.md, "Phone numbers")."""

import pytest

from messaging_project.core.phones import InvalidPhoneNumber, formatted_phone, normalize_phone


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


def test_a_number_just_stored_is_shown_without_parsing_it_again(monkeypatch):
    """The inbound sender is parsed once: to store it; its event's contact record
    formats the same parse."""
    import phonenumbers

    from messaging_project.core import phones

    phones.parsed_number.cache_clear()
    phones.formatted_phone.cache_clear()
    calls = []
    parse = phonenumbers.parse
    monkeypatch.setattr(phonenumbers, "parse", lambda *a, **k: calls.append(a) or parse(*a, **k))

    stored = normalize_phone("+44 7700 900123")
    assert formatted_phone(stored) == "+44 7700 900123"
    assert formatted_phone(stored) == "+44 7700 900123"
    assert calls == [("+447700900123", None)]


def test_a_kept_parse_is_not_changed_by_its_readers():
    """Brazil's ninth digit makes a new number rather than changing the kept one."""
    import phonenumbers

    as_written = phonenumbers.format_number(
        phonenumbers.parse("+551187654321", None), phonenumbers.PhoneNumberFormat.INTERNATIONAL
    )
    assert normalize_phone("551187654321") == "5511987654321"
    assert formatted_phone("551187654321") == as_written
    assert normalize_phone("551187654321") == "5511987654321"
