"""Property-based tests (hypothesis): phone normalisation and the paginator's arithmetic."""

from unittest import mock
from urllib.parse import parse_qs, urlencode, urlsplit

import phonenumbers
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from messaging_project.api import pagination
from messaging_project.api.pagination import GAP, LaravelPagination, laravel_window
from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone

PROPERTY_SETTINGS = settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# Phone numbers --------------------------------------------------------------------------

phone_like = st.from_regex(r"\A\+?[0-9 ()./-]{1,40}\Z")


def example_numbers() -> st.SearchStrategy[phonenumbers.PhoneNumber]:
    """Real numbers of every region and type libphonenumber has an example of, with the
    last digits changed, so that most are possible and some are not."""
    examples = [
        number
        for region in sorted(phonenumbers.SUPPORTED_REGIONS)
        for kind in (phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE)
        if (number := phonenumbers.example_number_for_type(region, kind)) is not None
    ]

    def vary(number: phonenumbers.PhoneNumber, tail: int) -> phonenumbers.PhoneNumber:
        national = str(number.national_number)
        changed = national[:-3] + f"{tail:03d}" if len(national) > 3 else national
        return phonenumbers.PhoneNumber(
            country_code=number.country_code,
            national_number=int(changed),
            italian_leading_zero=number.italian_leading_zero,
            number_of_leading_zeros=number.number_of_leading_zeros,
        )

    return st.builds(vary, st.sampled_from(examples), st.integers(0, 999))


@PROPERTY_SETTINGS
@given(st.text(max_size=50) | phone_like)
@example("")
@example("+")
@example("++1")
@example("+1 (415) 555-2671\n")
@example("\u0661\u0664\u0661\u0665")  # Arabic-Indic digits: \d would match them, [0-9] must not
def test_any_text_is_digits_or_invalid(text):
    try:
        digits = normalize_phone(text)
    except InvalidPhoneNumber:
        return
    assert digits.isascii() and digits.isdigit()
    assert 2 <= len(digits) <= 17


@PROPERTY_SETTINGS
@given(example_numbers())
def test_a_normalised_number_formatted_back_normalises_to_the_same_digits(number):
    written = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    try:
        digits = normalize_phone(written)
    except InvalidPhoneNumber:
        return
    parsed = phonenumbers.parse(f"+{digits}", None)
    for style in (
        phonenumbers.PhoneNumberFormat.E164,
        phonenumbers.PhoneNumberFormat.INTERNATIONAL,
    ):
        assert normalize_phone(phonenumbers.format_number(parsed, style)) == digits
    assert normalize_phone(digits) == digits  # a number without its plus reads the same
    assert normalize_phone(f" +{digits} ") == digits


# The paginator --------------------------------------------------------------------------

pages = st.integers(min_value=1, max_value=200)


@PROPERTY_SETTINGS
@given(last=pages, current=st.integers(min_value=1, max_value=220))
def test_laravel_window_shape(last, current):
    window = laravel_window(current, last)
    numbers = [entry for entry in window if entry is not GAP]

    assert numbers == sorted(set(numbers))  # ascending, no repeats
    assert all(1 <= number <= last for number in numbers)
    if last < 14:
        assert window == list(range(1, last + 1))
        return
    assert numbers[:2] == [1, 2] and numbers[-2:] == [last - 1, last]
    if current <= last:  # the pages around the current one are always shown
        near = range(max(1, current - 3), min(last, current + 3) + 1)
        assert set(near) <= set(numbers)
    # A gap stands between two numbers that are not neighbours, never at an end or twice.
    assert window[0] is not GAP and window[-1] is not GAP
    for index, entry in enumerate(window):
        if entry is GAP:
            before, after = window[index - 1], window[index + 1]
            assert before is not GAP and after is not GAP and after - before > 1
        elif index and window[index - 1] is not GAP:
            assert entry == window[index - 1] + 1
    assert len(window) <= 15


def paginate(items: list[int], page: int, per_page: int) -> dict:
    """The page body for a list of `items`, with the database calls replaced by slicing."""
    request = Request(
        APIRequestFactory().get("/api/contacts", {"page": page, "per_page": per_page})
    )
    paginator = LaravelPagination()
    with (
        mock.patch.object(
            pagination,
            "page_rows",
            lambda rows, offset, limit: rows[offset : offset + limit],
        ),
        mock.patch.object(LaravelPagination, "count", lambda self, rows: len(rows)),
    ):
        data = paginator.paginate_queryset(items, request)
    return paginator.page_body(data)


def page_number(url: str | None) -> int | None:
    return None if url is None else int(parse_qs(urlsplit(url).query)["page"][0])


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(
    total=st.integers(min_value=0, max_value=2000),
    page=st.integers(min_value=1, max_value=250),
    per_page=st.integers(min_value=1, max_value=100),
)
def test_page_arithmetic(total, page, per_page):
    body = paginate(list(range(1, total + 1)), page, per_page)
    meta, links = body["meta"], body["links"]
    last_page = max(1, -(-total // per_page))

    assert meta["total"] == total  # exact, whether counted or inferred from a short page
    assert meta["last_page"] == last_page
    assert meta["current_page"] == page and meta["per_page"] == per_page
    expected = list(range(1, total + 1))[(page - 1) * per_page : page * per_page]
    assert body["data"] == expected
    if expected:
        assert meta["from"] == expected[0] and meta["to"] == expected[-1]
        assert meta["to"] - meta["from"] + 1 == len(expected) <= per_page
    else:
        assert meta["from"] is None and meta["to"] is None
        assert page > last_page or total == 0

    assert page_number(links["first"]) == 1
    assert page_number(links["last"]) == last_page
    assert page_number(links["prev"]) == (page - 1 if page > 1 else None)
    assert page_number(links["next"]) == (page + 1 if page < last_page else None)

    window = meta["links"]
    assert window[0]["label"] == "&laquo; Previous" and window[-1]["label"] == "Next &raquo;"
    assert window[0]["url"] == links["prev"] and window[-1]["url"] == links["next"]
    active = [entry["label"] for entry in window if entry["active"]]
    assert active == ([str(page)] if page <= last_page else [])
    for entry in window[1:-1]:
        if entry["label"] == "...":
            assert entry["url"] is None
        else:
            assert page_number(entry["url"]) == int(entry["label"])


query_text = st.text(alphabet=st.sampled_from("ap9 &=%+?#/é_-."), min_size=0, max_size=6)


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(
    pairs=st.lists(
        st.tuples(st.one_of(st.just("page"), st.just("per_page"), query_text), query_text),
        max_size=6,
    ),
    number=st.integers(min_value=1, max_value=10**9),
)
def test_page_links_are_the_query_with_only_the_page_changed(pairs, number):
    """The links, encoded once per response, are what setting `page` on the request's
    query and encoding it afresh gives, whatever the other parameters hold."""
    request = Request(APIRequestFactory().get("/api/contacts?" + urlencode(pairs)))
    paginator = LaravelPagination()
    paginator.request = request
    paginator.path = "http://testserver/api/contacts"
    paginator.url_around_page = paginator.around_page()

    expected = request.query_params.copy()
    expected["page"] = str(number)
    assert paginator.page_url(number) == f"{paginator.path}?{expected.urlencode()}"
