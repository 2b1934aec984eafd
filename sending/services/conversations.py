"""The conversation of a contact and a number: created with the pair's first chat.

Every chat is recorded with its conversation (`with_conversations`, called just before
the insert, in the recording transaction): one upsert (INSERT ... ON CONFLICT DO UPDATE
... RETURNING) finds or creates the conversations of a batch in one statement, and two
transactions creating the same pair at once both end with the one row. The conversation's
row is where its state changes with each chat (docs/numbers.md).
"""

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
    that do not exist yet: one statement, in pair order (so that concurrent batches lock
    their conversations in one order)."""
    pairs = {(chat.contact_id, chat.number_id) for chat in chats if chat.conversation_id is None}
    if not pairs:
        return
    organization_id = chats[0].organization_id
    upserted = Conversation.objects.bulk_create(
        [
            Conversation(organization_id=organization_id, contact_id=contact, number_id=number)
            for contact, number in sorted(pairs)
        ],
        update_conflicts=True,
        unique_fields=["contact", "number"],
        update_fields=["organization"],  # unchanged: the row is returned whether new or not
    )
    found = {(c.contact_id, c.number_id): c for c in upserted}
    for chat in chats:
        if chat.conversation_id is None:
            chat.conversation = found[(chat.contact_id, chat.number_id)]
