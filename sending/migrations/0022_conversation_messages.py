"""Each conversation's count of live chats, kept from now on with each recording and
counted here once for the conversations that exist (docs/inbox.md)."""

from django.db import migrations, models

COUNT = """
    UPDATE sending_conversation SET messages = (
        SELECT COUNT(*) FROM sending_chat c
        WHERE c.conversation_id = sending_conversation.id AND c.deleted_at IS NULL
    )
"""


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0021_conversation_times'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversation',
            name='messages',
            field=models.PositiveIntegerField(db_default=0, default=0, verbose_name='messages'),
        ),
        migrations.RunSQL(COUNT, migrations.RunSQL.noop, elidable=True),
    ]
