"""The conversation of a contact and a number: created with the pair's first chat, and
moved by every chat after.

Every chat is recorded with its conversation (`with_conversations`, called just before
the insert, in the recording transaction): one upsert (sending/queries.py) finds or
creates the conversations of a batch and moves them in the same statement: each chat
brings its time (`last_message_at`), and an inbound message opens the conversation
(a `resolved` or `pending` one reopens), counts as unread and moves `last_inbound_at`.
Nothing outbound changes the status or the unread count. Two transactions creating the
same pair at once both end with the one row. New and reopened conversations are
announced (sending.recorded.ConversationsChanged): the inbox emits their events.

Every chat also adds one to its conversation's count of messages (the messages page's
total). A send (`with_sent_conversations`) only moves its conversation's time and count,
so it does not lock the row with the upsert: it reads the conversation, and moves both
as its transaction ends. Sends to one contact then queue on that row for a commit each, not
for their whole recording.
"""

from datetime import datetime

from django.utils import timezone

from events.services import at_batch_end
from sending.models import Chat, ChatType, Conversation
from sending.queries import (
    Offered,
    create_conversations,
    find_conversations,
    move_conversation_statement,
    upsert_conversations,
)
from sending.recorded import ConversationsChanged, MessagesIn, MessagesOut, announce


def insert_chat(chat: Chat, *, past: bool = False) -> Chat:
    """Insert a chat the webhook brought (a message received, a Business app echo, a past
    message) with its conversation, and tell the apps that listen (sending.recorded), in
    the caller's transaction. `past`: imported history, which neither reopens nor counts
    as unread. A message id the organization has is an IntegrityError."""
    with_conversations([chat], past=past)
    chat.save(force_insert=True)
    announce(MessagesIn([chat]) if chat.type == ChatType.INBOUND else MessagesOut([chat]))
    return chat


def message_time(chat: Chat, now: datetime) -> datetime:
    """When a chat's message was written: WhatsApp's time when it gave one (history), never
    later than now (a clock ahead must not hold the window open)."""
    return min(chat.sent_at, now) if chat.sent_at is not None else now


def attach(chats: list[Chat], found: dict[tuple[int, int], Conversation]) -> None:
    """Give each chat its pair's conversation, with the contact and number it has loaded."""
    for chat in chats:
        conversation = found[(chat.contact_id, chat.number_id)]
        # The chat's contact and number, loaded already, serve its conversation too.
        if Chat.contact.is_cached(chat):
            conversation.contact = chat.contact
        if Chat.number.is_cached(chat):
            conversation.number = chat.number
        chat.conversation = conversation


def with_sent_conversations(chats: list[Chat]) -> None:
    """Set the conversation of each unsaved outbound chat of a send, making those that do
    not exist yet; the others' time moves at the end of the event batch
    (events.services.at_batch_end), in conversation order."""
    waiting = [chat for chat in chats if chat.conversation_id is None]
    if not waiting:
        return
    now = timezone.now()
    times: dict[tuple[int, int], datetime] = {}
    counts: dict[tuple[int, int], int] = {}
    for chat in waiting:
        pair, at = (chat.contact_id, chat.number_id), message_time(chat, now)
        times[pair] = max(at, times.get(pair, at))
        counts[pair] = counts.get(pair, 0) + 1
    organization_id = waiting[0].organization_id
    found = find_conversations(organization_id, sorted(times))
    created: list[Conversation] = []
    while missing := {pair: (at, counts[pair]) for pair, at in times.items() if pair not in found}:
        made = create_conversations(organization_id, missing)
        created += made
        found.update({(c.contact_id, c.number_id): c for c in made})
        # Made by another transaction since the look-up: read once it has committed.
        if lost := sorted(pair for pair in missing if pair not in found):
            found.update(find_conversations(organization_id, lost))
    made_here = {conversation.pk for conversation in created}
    for pair, conversation in sorted(found.items(), key=lambda item: item[1].pk):
        if conversation.pk not in made_here:
            at_batch_end(*move_conversation_statement(conversation.pk, times[pair], counts[pair]))
            conversation.messages += counts[pair]
            if conversation.last_message_at is None or conversation.last_message_at < times[pair]:
                conversation.last_message_at = times[pair]
    attach(waiting, found)
    if created:
        announce(ConversationsChanged(created=created, reopened=[]))


def with_conversations(chats: list[Chat], *, past: bool = False) -> None:
    """Set the conversation of each unsaved chat (contact and number set), creating those
    that do not exist yet and moving them all: one statement, in pair order (so that
    concurrent batches lock their conversations in one order). `past`: the chats are
    imported history (no reopening, nothing unread)."""
    waiting = [chat for chat in chats if chat.conversation_id is None]
    if not waiting:
        return
    now = timezone.now()
    pairs: dict[tuple[int, int], list[Chat]] = {}
    for chat in waiting:
        pairs.setdefault((chat.contact_id, chat.number_id), []).append(chat)
    offered = []
    for (contact_id, number_id), pair_chats in sorted(pairs.items()):
        inbound = [message_time(c, now) for c in pair_chats if c.type == ChatType.INBOUND]
        offered.append(
            Offered(
                contact_id=contact_id,
                number_id=number_id,
                unread=0 if past else len(inbound),
                messages=len(pair_chats),
                last_message_at=max(message_time(c, now) for c in pair_chats),
                last_inbound_at=max(inbound) if inbound else None,
            )
        )
    upserted = upsert_conversations(waiting[0].organization_id, offered)
    attach(
        waiting,
        {(u.conversation.contact_id, u.conversation.number_id): u.conversation for u in upserted},
    )
    created = [u.conversation for u in upserted if u.created]
    reopened = [u.conversation for u in upserted if u.reopened]
    if created or reopened:
        announce(ConversationsChanged(created=created, reopened=reopened))
