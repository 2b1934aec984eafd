"""The two date styles of api.md, cut from isoformat() (messaging_project/core/formats.py)."""

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from messaging_project.core.formats import iso_datetime, laravel_datetime

offsets = st.integers(min_value=-23 * 60, max_value=23 * 60).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
aware = st.datetimes(
    min_value=datetime(1001, 1, 1), max_value=datetime(9998, 12, 31), timezones=offsets
)


@given(aware)
def test_the_styles_are_strftimes_in_utc(value):
    utc = value.astimezone(UTC)
    assert laravel_datetime(value) == utc.strftime("%Y-%m-%d %H:%M:%S")
    assert iso_datetime(value) == utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_examples_and_none():
    value = datetime(2031, 3, 9, 7, 5, 9, 120, tzinfo=timezone(timedelta(hours=2)))
    assert laravel_datetime(value) == "2031-03-09 05:05:09"
    assert iso_datetime(value) == "2031-03-09T05:05:09.000120Z"
    assert laravel_datetime(value.replace(microsecond=0)) == "2031-03-09 05:05:09"
    assert iso_datetime(value.replace(microsecond=0)) == "2031-03-09T05:05:09.000000Z"
    assert laravel_datetime(None) is None and iso_datetime(None) is None


def test_a_year_before_1000_keeps_four_digits():
    value = datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert laravel_datetime(value) == "0999-01-02 03:04:05"
    assert iso_datetime(value) == "0999-01-02T03:04:05.000000Z"
