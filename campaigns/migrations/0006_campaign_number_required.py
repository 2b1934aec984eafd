"""A campaign's number required, once 0004 filled it, and the new conversations counted
per number: a migration of its own, since PostgreSQL does not alter a table whose rows
the same transaction changed."""

import uuid

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('campaigns', '0005_campaigns_numbers'),
    ]

    operations = [
        migrations.AlterField(
            model_name='campaign',
            name='number',
            field=models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name='+', to='business_numbers.number', verbose_name='number'),
        ),
        migrations.AlterField(
            model_name='newconversation',
            name='number',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='business_numbers.number'),
        ),
        migrations.RemoveIndex(model_name='newconversation', name='new_conversations_by_time'),
        migrations.RemoveIndex(model_name='newconversation', name='new_conversations_by_phone'),
        migrations.AddIndex(
            model_name='newconversation',
            index=models.Index(fields=['number', 'started_at'], name='new_conversations_by_time'),
        ),
        migrations.AddIndex(
            model_name='newconversation',
            index=models.Index(fields=['number', 'phone'], name='new_conversations_by_phone'),
        ),
    ]
