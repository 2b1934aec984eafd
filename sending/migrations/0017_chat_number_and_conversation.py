"""Every chat names its organization's number and belongs to a conversation (one per
contact and number): existing chats are the default number's, and each contact with
chats gets its conversation with that number."""

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
        ('accounts', '0007_translated_names'),
        ('business_numbers', '0002_many_numbers'),
        ('contacts', '0008_import_source'),
        ('sending', '0016_numbers_move_to_their_app'),
    ]

    operations = [
        migrations.CreateModel(
            name='Conversation',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uuid', models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created at')),
                ('contact', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='conversations', to='contacts.contact', verbose_name='contact')),
                ('number', models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name='conversations', to='business_numbers.number', verbose_name='number')),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization')),
            ],
            options={
                'verbose_name': 'conversation',
                'verbose_name_plural': 'conversations',
                'ordering': ['id'],
                'constraints': [models.UniqueConstraint(fields=('contact', 'number'), name='unique_conversation')],
            },
        ),
        migrations.AddField(
            model_name='chat',
            name='number',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.RESTRICT, related_name='chats', to='business_numbers.number', verbose_name='number'),
        ),
        migrations.AddField(
            model_name='chat',
            name='conversation',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='chats', to='sending.conversation', verbose_name='conversation'),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='chat',
            name='number',
            field=models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name='chats', to='business_numbers.number', verbose_name='number'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='conversation',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chats', to='sending.conversation', verbose_name='conversation'),
        ),
    ]
