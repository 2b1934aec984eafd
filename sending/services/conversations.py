"""The conversation of a contact and a number: created with the pair's first chat.

Every chat is recorded with its conversation (`with_conversations`, called just before
the insert, in the recording transaction). The usual chat finds its conversation in one
indexed look-up; a new pair is inserted with ON CONFLICT DO NOTHING and read back, so
two transactions creating the same pair at once both end with the one row.
"""

from django.db.models import Q

from sending.models import Chat, ChatType, Conversation
from sending.recorded import MessagesIn, MessagesOut, announce


def insert_chat(chat: Chat) -> Chat:
    """Insert a chat the webhook brought (a message received, a Business app echo, a past
    message) with its conversation, and tell the apps that listen (sending.recorded), in
    the caller's transaction. A message id the organization has is an IntegrityError."""
    with_conversations([chat])
    chat.save(force_insert=True)
    announce(MessagesIn([chat]) if chat.type == ChatType.INBOUND else MessagesOut([chat]))
    return chat


def with_conversations(chats: list[Chat]) -> None:
    """Set the conversation of each unsaved chat (contact and number set), creating those
    that do not exist yet. One query when they all exist."""
    pairs = {(chat.contact_id, chat.number_id) for chat in chats if chat.conversation_id is None}
    if not pairs:
        return
    found = conversations_of(pairs)
    missing = pairs - found.keys()
    if missing:
        organization_id = chats[0].organization_id
        Conversation.objects.bulk_create(
            [
                Conversation(organization_id=organization_id, contact_id=c, number_id=n)
                for c, n in sorted(missing)
            ],
            ignore_conflicts=True,  # created meanwhile by a concurrent transaction
        )
        found.update(conversations_of(missing))
    for chat in chats:
        if chat.conversation_id is None:
            chat.conversation = found[(chat.contact_id, chat.number_id)]


def conversations_of(pairs: set[tuple[int, int]]) -> dict[tuple[int, int], Conversation]:
    """The existing conversations of these (contact, number) pairs: one indexed look-up
    per number (a campaign's batch is one number's)."""
    contacts_by_number: dict[int, list[int]] = {}
    for contact_id, number_id in pairs:
        contacts_by_number.setdefault(number_id, []).append(contact_id)
    match = Q()
    for number_id, contact_ids in contacts_by_number.items():
        match |= Q(number_id=number_id, contact_id__in=contact_ids)
    found = Conversation.objects.filter(match)
    return {(c.contact_id, c.number_id): c for c in found if (c.contact_id, c.number_id) in pairs}
