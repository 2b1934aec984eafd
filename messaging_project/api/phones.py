"""Phone numbers: parsed with libphonenumber, stored as digits with the country code."""

import re

import phonenumbers

# Digits with the usual separators; letters (vanity numbers) are not accepted.
PHONE_CHARACTERS = re.compile(r"^\+?[0-9 ()./-]+$")
INVALID_PHONE = "The phone must be a valid phone number with its country code."


class InvalidPhoneNumber(ValueError):
    pass


def normalize_phone(raw: str) -> str:
    """`+1 (415) 555-2671` -> `14155552671`. A missing plus is read as if it were there."""
    text = raw.strip()
    if not PHONE_CHARACTERS.match(text) or len(text) > 32:
        raise InvalidPhoneNumber(INVALID_PHONE)
    if not text.startswith("+"):
        text = f"+{text}"
    try:
        number = phonenumbers.parse(text, None)
    except phonenumbers.NumberParseException:
        raise InvalidPhoneNumber(INVALID_PHONE) from None
    if not phonenumbers.is_possible_number(number):
        raise InvalidPhoneNumber(INVALID_PHONE)
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164).lstrip("+")
