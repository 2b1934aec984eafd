"""The upgrade that took the slot out of the rollup's key (analytics 0002): each day's
slots are added up into one row, and nothing is lost.

The test migrates the test database back to analytics 0001, stores figures split over
slots with the old models, and migrates forward again."""

from datetime import date

import pytest

from analytics.models import DailyBillable, DailyMessages
from analytics.selectors import messages_per_day
from tests.databases import migrate
from tests.factories import OrganizationFactory

BEFORE = [("analytics", "0001_initial")]
DAY = date(2026, 11, 1)


@pytest.mark.migrates
@pytest.mark.django_db(transaction=True)
def test_the_slots_of_a_day_are_added_up():
    organization = OrganizationFactory()
    executor = migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps
        number = old.get_model("business_numbers", "Number").objects.create(
            organization_id=organization.pk, kind="sandbox", is_default=True
        )
        messages = old.get_model("analytics", "DailyMessages")
        billable = old.get_model("analytics", "DailyBillable")
        for slot in range(3):
            messages.objects.create(
                organization_id=organization.pk, number=number, day=DAY, slot=slot,
                outbound=slot + 1, sent=slot, inbound=10,
            )  # fmt: skip
            billable.objects.create(
                organization_id=organization.pk, number=number, day=DAY, slot=slot,
                category="marketing", messages=2,
            )  # fmt: skip
        messages.objects.create(  # a day in one slot only
            organization_id=organization.pk, number=number, day=date(2026, 11, 2), slot=5,
            inbound=1,
        )  # fmt: skip
    finally:
        migrate(None)

    assert DailyMessages.objects.count() == 2
    assert DailyBillable.objects.get().messages == 6
    first, second = messages_per_day(organization=organization, start=DAY, end=date(2026, 11, 2))
    assert first.counts == {
        "outbound": 6, "sent": 3, "delivered": 0, "read": 0, "failed": 0, "inbound": 30,
    }  # fmt: skip
    assert first.billable == {"marketing": 6}
    assert second.counts["inbound"] == 1
