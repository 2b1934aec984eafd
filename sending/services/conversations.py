"""The conversation of a contact and a number: created with the pair's first chat.

Every chat is recorded with its conversation (`with_conversations`, called just before
the insert, in the recording transaction). The usual chat finds its conversation in one
indexed look-up; a new pair inserts it first, and two transactions creating the same
pair at once meet on the unique constraint: the loser takes the winner's row.
"""

from django.db import IntegrityError, transaction
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
    for contact_id, number_id in pairs - found.keys():
        found[(contact_id, number_id)] = create_conversation(
            chats, contact_id=contact_id, number_id=number_id
        )
    for chat in chats:
        if chat.conversation_id is None:
            chat.conversation = found[(chat.contact_id, chat.number_id)]


def conversations_of(pairs: set[tuple[int, int]]) -> dict[tuple[int, int], Conversation]:
    match = Q()
    for contact_id, number_id in pairs:
        match |= Q(contact_id=contact_id, number_id=number_id)
    return {(c.contact_id, c.number_id): c for c in Conversation.objects.filter(match)}


def create_conversation(chats: list[Chat], *, contact_id: int, number_id: int) -> Conversation:
    organization_id = next(chat.organization_id for chat in chats if chat.contact_id == contact_id)
    try:
        with transaction.atomic():
            return Conversation.objects.create(
                organization_id=organization_id, contact_id=contact_id, number_id=number_id
            )
    except IntegrityError:  # created meanwhile by a concurrent transaction
        return Conversation.objects.get(contact_id=contact_id, number_id=number_id)
