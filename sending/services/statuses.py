"""A chat's channel status: the webhook's status events recorded, the forward order,
moving chats forward, and the statuses that came before their chat.

Meta often posts `sent` within a few hundred milliseconds of accepting a send, before
the send has recorded its chat. Such a status is stored with no chat ("kept aside");
when the chat is recorded, `apply_kept_statuses` attaches them and moves it forward.
The webhook and the send meet on the message id: both hold a lock on it
(`hold_message_ids`) from before they look for the other's row until they commit, so
that whichever commits second sees the first one's row.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from django.db.models import OuterRef, Subquery

from accounts.models import Organization
from sending.models import Chat, ChatStatus, ChatStatusEvent
from sending.queries import any_kept, held_statuses, move_chats
from sending.recorded import StatusesKept, StatusesRecorded, announce
from sending.services.events import emit_status_updates, forward_statuses

# Forward order of an outbound message's status; anything else never moves it.
STATUS_RANK: dict[str, int] = {
    ChatStatus.ACCEPTED: 0,
    ChatStatus.HELD_FOR_QUALITY_ASSESSMENT: 0,
    ChatStatus.PAUSED: 0,
    ChatStatus.SENT: 1,
    ChatStatus.DELIVERED: 2,
    ChatStatus.READ: 3,
    ChatStatus.PLAYED: 4,
}
FORWARD = (ChatStatus.SENT, ChatStatus.DELIVERED, ChatStatus.READ, ChatStatus.PLAYED)
# The statuses that move a chat; `warning` and `deleted` are kept in its history only.
MOVING = {*FORWARD, ChatStatus.FAILED}
WEBHOOK_STATUSES = {*MOVING, ChatStatus.WARNING, ChatStatus.DELETED}


def advance_statuses(
    events: list,
    chats: dict[str, Chat],
    history: dict[int, list[ChatStatusEvent]],
    *,
    inserting: list[ChatStatusEvent] | None = None,
    priced: set[int] | frozenset[int] = frozenset(),
) -> None:
    """Move each chat forward only, with conditional updates so that concurrent
    deliveries cannot move a chat backwards either. `failed` is final and keeps its error.
    `events` have `wam_id`, `status` and the error columns (StatusUpdate, ChatStatusEvent);
    `history`: each chat's status events, these included, oldest first (what its
    message.status.update shows); `inserting`: status events written in the same round
    trip; `priced`: the chats whose new statuses carry WhatsApp's pricing, which the
    figures read when they count the chat. Each chat that moved is changed in memory as
    it was in the database, and is a message.status.update event
    (sending/services/events.py)."""
    highest: dict[int, str] = {}
    failures: list[ChatStatusEvent] = []
    for event in events:
        chat = chats[event.wam_id]
        if event.status == ChatStatus.FAILED:
            failures.append(failure(event, chat))
            highest[chat.pk] = ChatStatus.FAILED
        elif highest.get(chat.pk) != ChatStatus.FAILED:
            current = highest.get(chat.pk)
            if current is None or STATUS_RANK[event.status] > STATUS_RANK[current]:
                highest[chat.pk] = event.status
    forward: dict[str, tuple[list[int], list[str]]] = {}
    for status in FORWARD:
        ids = [pk for pk, target in highest.items() if target == status]
        if ids:
            lower = [name for name, rank in STATUS_RANK.items() if rank < STATUS_RANK[status]]
            forward[status] = (ids, lower)
    by_id = {chat.pk: chat for chat in chats.values()}
    # A priced status that leaves its chat where it is (one come after a later one) has
    # the chat counted again all the same, for its price: rare, a statement then only.
    # The chats' statuses are as the held message ids keep them until the commit.
    moving = {event.chat_id for event in failures} | {
        pk for ids, lower in forward.values() for pk in ids if by_id[pk].status in lower
    }
    recount = sorted(priced - moving)
    moved_ids = move_chats(inserting or [], forward, failures, recount=recount)
    moved = [by_id[pk] for pk in sorted(moved_ids)]
    for chat in moved:
        chat.status = highest[chat.pk]
    for event in failures:  # the last failure's error is the one the chat kept
        chat = by_id[cast(int, event.chat_id)]
        chat.error_code, chat.error_title = event.error_code, event.error_title
        chat.error_details = event.error_details
    emit_status_updates(moved, history)


def failure(event, chat: Chat) -> ChatStatusEvent:
    """A failed status as the update that fails its chat needs it."""
    return ChatStatusEvent(
        chat=chat,
        status=ChatStatus.FAILED,
        error_code=event.error_code,
        error_title=event.error_title,
        error_details=event.error_details,
    )


def apply_kept_statuses(chat: Chat) -> int:
    """Attach the statuses that arrived before `chat` was recorded and move it forward.
    Runs in the transaction that records the chat, holding its message id."""
    if not chat.wam_id or not any_kept(chat.organization_id, chat.wam_id):
        return 0
    return apply_all_kept_statuses([chat])


def apply_all_kept_statuses(chats: list[Chat]) -> int:
    """apply_kept_statuses for many chats of one organization (a campaign's batch): one
    read, one update and one move of the chats whatever their number. How many statuses
    were attached."""
    by_wam_id = {chat.wam_id: chat for chat in chats if chat.wam_id}
    if not by_wam_id:
        return 0
    organization_id = chats[0].organization_id
    kept = list(
        ChatStatusEvent.objects.filter(
            organization_id=organization_id, wam_id__in=list(by_wam_id), chat__isnull=True
        ).order_by("timestamp", "id")
    )
    if not kept:
        return 0
    ChatStatusEvent.objects.filter(pk__in=[event.pk for event in kept]).update(
        chat=Subquery(
            Chat.objects.filter(organization_id=organization_id, wam_id=OuterRef("wam_id")).values(
                "pk"
            )[:1]
        )
    )
    history: dict[int, list[ChatStatusEvent]] = {}
    for event in kept:
        event.chat = by_wam_id[event.wam_id]
        history.setdefault(event.chat.pk, []).append(event)
    forward = [event for event in kept if event.status in MOVING]
    priced = {by_wam_id[event.wam_id].pk for event in kept if event.pricing is not None}
    advance_statuses(forward, by_wam_id, history, priced=priced)
    return len(kept)


# The webhook's statuses ------------------------------------------------------------


@dataclass(frozen=True)
class StatusUpdate:
    wam_id: str
    status: str
    timestamp: datetime
    error_code: int | None = None
    error_title: str = ""
    error_details: dict | None = None
    pricing: dict | None = None
    conversation: dict | None = None
    callback_data: str = ""  # the send's biz_opaque_callback_data, when it had one
    # The status as WhatsApp sent it and its change's value (for the original product's
    # message.status.update body, sent for every new status): references, nothing copied.
    item: dict | None = field(default=None, compare=False, repr=False)
    value: dict | None = field(default=None, compare=False, repr=False)
    # When the webhook took it, for a status applied later (queued); None: now.
    received_at: datetime | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str, datetime]:
        return (self.wam_id, self.status, self.timestamp)


def chats_with_statuses(*, organization: Organization, callback_data) -> dict[str, Chat]:
    """The recorded chats that statuses carrying this callback data came for (each with
    its contact), by callback data: sends whose chat was recorded and whose owner may
    not know it."""
    found = (
        ChatStatusEvent.objects.filter(
            organization=organization, chat__isnull=False, callback_data__in=set(callback_data)
        )
        .select_related("chat")
        .order_by("id")
    )
    # chat__isnull=False: each has its chat.
    return {event.callback_data: cast(Chat, event.chat) for event in found}


def store_statuses(organization: Organization, updates: list[StatusUpdate]) -> tuple[int, int]:
    """Store a delivery's parsed status updates and move their chats forward, in two
    round trips whatever their number (a busy number sends hundreds per delivery; WhatsApp
    posts one status a delivery most of the time): the message ids held and, holding
    them, their chats and the statuses stored before read (sending/queries.py); then the
    new statuses inserted and the chats moved. Returns how many were new and how many
    had been stored before (WhatsApp delivers again whatever did not get our 200)."""
    if not updates:
        return 0, 0
    # Holding the message ids before looking for the chats: a send recording one of them
    # now waits for our commit and then finds the statuses we keep aside.
    chats, stored = held_statuses(organization.pk, {update.wam_id for update in updates})
    seen = {(event.wam_id, event.status, event.timestamp) for event in stored}
    new: list[StatusUpdate] = []
    duplicates = 0
    for update in updates:
        if update.key in seen:
            duplicates += 1
            continue
        seen.add(update.key)
        new.append(update)
    if not new:
        return 0, duplicates
    events = [
        ChatStatusEvent(
            organization=organization,
            chat=chats.get(update.wam_id),  # None: kept aside until the chat is recorded
            wam_id=update.wam_id,
            status=update.status,
            timestamp=update.timestamp,
            error_code=update.error_code,
            error_title=update.error_title,
            error_details=update.error_details,
            pricing=update.pricing,
            conversation=update.conversation,
            callback_data=update.callback_data,
            # None: insert_statuses stamps it now.
            received_at=cast(datetime, update.received_at),
        )
        for update in new
    ]
    # Each chat's history as its message.status.update shows it: stored first (by time,
    # then id), the new ones after those of the same time (their ids come later).
    history: dict[int, list[ChatStatusEvent]] = {}
    for event in [*stored, *events]:
        if event.chat_id is not None:
            history.setdefault(event.chat_id, []).append(event)
    for chat_events in history.values():
        chat_events.sort(key=lambda event: event.timestamp)  # stable: ids kept in order
    moving = [update for update in new if update.wam_id in chats and update.status in MOVING]
    priced = {
        chats[update.wam_id].pk
        for update in new
        if update.pricing is not None and update.wam_id in chats
    }
    advance_statuses(moving, chats, history, inserting=events, priced=priced)
    # The original product's receivers get every new status, whichever chat it is for.
    forward_statuses(
        organization.pk,
        [(update.item, update.value) for update in new if update.item is not None],
    )
    found = [update for update in new if update.wam_id in chats]
    if found:
        announce(StatusesRecorded(organization, found, chats))
    kept = [update for update in new if update.wam_id not in chats and update.callback_data]
    if kept:  # rare: no query at all on the usual path
        announce(StatusesKept(organization, kept))
    return len(new), duplicates
