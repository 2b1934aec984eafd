"""Existing chats are their organization's default number's, and each contact with chats
gets its conversation with that number. Data only: PostgreSQL does not alter a table
whose rows the same transaction changed."""

import uuid

import django.db.models.deletion
from django.db import migrations, models

BATCH = 1000


def backfill(apps, schema_editor):
    Number = apps.get_model('business_numbers', 'Number')
    Chat = apps.get_model('sending', 'Chat')
    Conversation = apps.get_model('sending', 'Conversation')
    db = schema_editor.connection.alias
    defaults = models.Subquery(
        Number.objects.using(db)
        .filter(organization_id=models.OuterRef('organization_id'), is_default=True)
        .values('pk')[:1]
    )
    Chat.objects.using(db).filter(number__isnull=True).update(number=defaults)
    pairs = (
        Chat.objects.using(db)
        .values('organization_id', 'contact_id', 'number_id')
        .annotate(first=models.Min('created_at'))
        .order_by('contact_id', 'number_id')
    )
    batch = []
    for pair in pairs.iterator(chunk_size=BATCH):
        batch.append(
            Conversation(
                uuid=uuid.uuid4(),
                organization_id=pair['organization_id'],
                contact_id=pair['contact_id'],
                number_id=pair['number_id'],
            )
        )
        if len(batch) == BATCH:
            Conversation.objects.using(db).bulk_create(batch)
            batch = []
    Conversation.objects.using(db).bulk_create(batch)
    conversation = models.Subquery(
        Conversation.objects.using(db)
        .filter(contact_id=models.OuterRef('contact_id'), number_id=models.OuterRef('number_id'))
        .values('pk')[:1]
    )
    Chat.objects.using(db).filter(conversation__isnull=True).update(conversation=conversation)


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0017_chat_number_and_conversation'),
        ('business_numbers', '0003_default_numbers'),
    ]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
