"""Reads of sending for the apps above it (campaigns): who a number messaged lately."""

from collections.abc import Iterable
from datetime import datetime

from sending.models import Chat, ChatType


def messaged_since(*, number_id: int, contact_ids: Iterable[int], since: datetime) -> set[int]:
    """Of these contacts, those the number sent any message since `since`."""
    ids = list(contact_ids)
    if not ids:
        return set()
    return set(
        Chat.objects.filter(
            number_id=number_id,
            type=ChatType.OUTBOUND,
            contact_id__in=ids,
            created_at__gte=since,
        ).values_list("contact_id", flat=True)
    )
