"""Every chat names its organization's number and belongs to a conversation (one per
contact and number): the columns and the conversations' table; 0018 fills them."""

import uuid

import django.db.models.deletion
from django.db import migrations, models


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
    ]
