"""The times of the conversations that exist: their latest message and latest inbound
message (WhatsApp's time when it is earlier than the recording, as imported history's
is). They start open and read: a conversation's past is not news. Data only, after
0020: PostgreSQL does not alter a table whose rows the same transaction changed."""

from django.db import migrations

# A message's time: WhatsApp's when it gave an earlier one (imported history).
WRITTEN = "CASE WHEN c.sent_at IS NOT NULL AND c.sent_at < c.created_at THEN c.sent_at ELSE c.created_at END"

BACKFILL = f"""
    UPDATE sending_conversation SET
        last_message_at = (
            SELECT MAX({WRITTEN}) FROM sending_chat c
            WHERE c.conversation_id = sending_conversation.id
        ),
        last_inbound_at = (
            SELECT MAX({WRITTEN}) FROM sending_chat c
            WHERE c.conversation_id = sending_conversation.id AND c.type = 'inbound'
        ),
        status_changed_at = created_at
"""


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0020_conversation_state'),
    ]

    operations = [
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
