"""Every chat's number and conversation required, once 0017 filled them: a migration of
its own, since PostgreSQL does not alter a table whose rows the same transaction changed."""

import uuid

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0018_chats_conversations'),
    ]

    operations = [
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
