"""Phone numbers: parsed with libphonenumber, stored as digits with the country code.

One number, one form, whoever writes it: WhatsApp's own `wa_id` and what a client
sends must become the same contact. Two countries need more than libphonenumber's
E.164 form for that (docs/webhooks.md, "Phone numbers"):

- Mexico: WhatsApp writes mobiles as `521` + 10 digits, the old mobile prefix that
  Mexico dropped in 2019; libphonenumber rejects it. The `1` is removed: `52` + 10 digits.
- Brazil: WhatsApp accounts older than the ninth digit keep a `wa_id` without it
  (`55` + area code + 8 digits starting 6-9, which libphonenumber only finds "possible").
  The `9` is put back, as every Brazilian mobile has had it since 2016.

Argentina needs nothing: WhatsApp's `549` + 10 digits is libphonenumber's international
mobile form, and `54` + 10 digits is a valid landline, so neither may be rewritten.
"""

import re
from functools import lru_cache

import phonenumbers
from django.utils.translation import gettext_noop

# Digits with the usual separators; letters (vanity numbers) are not accepted.
PHONE_CHARACTERS = re.compile(r"^\+?[0-9 ()./-]+$")
# In English, the API's language; marked so that the admin shows it translated.
INVALID_PHONE = gettext_noop("The phone must be a valid phone number with its country code.")
LOCAL_ONLY_PHONE = gettext_noop(
    "The phone is only possible as a local number: give it with its country code and area code."
)
MEXICAN_OLD_MOBILE = re.compile(r"^521([0-9]{10})$")
# Area code (two digits, no zero) and an eight-digit mobile without its ninth digit.
BRAZILIAN_MOBILE_WITHOUT_NINE = re.compile(r"^([1-9][1-9])([6-9][0-9]{7})$")


# Numbers kept parsed and formatted, by their digits: an inbound message's sender is
# parsed to store it and parsed again to show it (the contact in its event's body, a
# page of contacts), and libphonenumber's parse costs more than the rest of a contact's
# record. A few hundred kB at most.
PARSED_NUMBERS_KEPT = 4096


class InvalidPhoneNumber(ValueError):
    pass


@lru_cache(maxsize=PARSED_NUMBERS_KEPT)
def parsed_number(digits: str) -> phonenumbers.PhoneNumber:
    """`+digits` parsed; raises NumberParseException (not kept). The object is shared by
    every caller: read it, never change it."""
    return phonenumbers.parse(f"+{digits}", None)


def normalize_phone(raw: str) -> str:
    """`+1 (415) 555-2671` -> `14155552671`. A missing plus is read as if it were there."""
    text = raw.strip()
    if not PHONE_CHARACTERS.match(text) or len(text) > 32:
        raise InvalidPhoneNumber(INVALID_PHONE)
    digits = re.sub(r"[^0-9]", "", text)
    mexican = MEXICAN_OLD_MOBILE.match(digits)
    if mexican:
        digits = f"52{mexican[1]}"
    try:
        number = parsed_number(digits)
    except phonenumbers.NumberParseException:
        raise InvalidPhoneNumber(INVALID_PHONE) from None
    number = with_brazilian_ninth_digit(number)
    reason = phonenumbers.is_possible_number_with_reason(number)
    # Too short for a number reached from abroad (`+12345678`: no area code): WhatsApp
    # cannot deliver to it, whoever gives it (the API, the admin, campaigns, imports).
    if reason == phonenumbers.ValidationResult.IS_POSSIBLE_LOCAL_ONLY:
        raise InvalidPhoneNumber(LOCAL_ONLY_PHONE)
    if reason != phonenumbers.ValidationResult.IS_POSSIBLE:
        raise InvalidPhoneNumber(INVALID_PHONE)
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164).lstrip("+")


def with_brazilian_ninth_digit(number: phonenumbers.PhoneNumber) -> phonenumbers.PhoneNumber:
    if number.country_code != 55:
        return number
    old = BRAZILIAN_MOBILE_WITHOUT_NINE.match(phonenumbers.national_significant_number(number))
    if old is None:
        return number
    candidate = phonenumbers.parse(f"+55{old[1]}9{old[2]}", None)
    return candidate if phonenumbers.is_valid_number(candidate) else number


@lru_cache(maxsize=PARSED_NUMBERS_KEPT)
def formatted_phone(phone: str) -> str:
    """Stored digits in international format (`+52 55 1234 5678`), as the original product
    shows them; the digits with a plus when libphonenumber cannot format them."""
    if not phone:
        return ""
    try:
        number = parsed_number(phone)
    except phonenumbers.NumberParseException:
        return f"+{phone}"
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
