"""The conversation's state (docs/inbox.md): status, assignee, labels, unread count and
times; and the index a conversation's messages are read by, newest first."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0008_membership_role'),
        ('business_numbers', '0005_news_times'),
        ('contacts', '0009_import_stored_file'),
        ('sending', '0019_chat_number_required'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='conversation',
            name='assignee',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='assigned_conversations', to=settings.AUTH_USER_MODEL, verbose_name='assignee'),
        ),
        migrations.AddField(
            model_name='conversation',
            name='labels',
            field=models.JSONField(blank=True, db_default=[], default=list, verbose_name='labels'),
        ),
        migrations.AddField(
            model_name='conversation',
            name='last_inbound_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='last inbound message at'),
        ),
        migrations.AddField(
            model_name='conversation',
            name='last_message_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='last message at'),
        ),
        migrations.AddField(
            model_name='conversation',
            name='status',
            field=models.CharField(choices=[('open', 'open'), ('pending', 'pending'), ('resolved', 'resolved')], db_default='open', default='open', max_length=16, verbose_name='status'),
        ),
        migrations.AddField(
            model_name='conversation',
            name='status_changed_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='status changed at'),
        ),
        migrations.AddField(
            model_name='conversation',
            name='unread',
            field=models.PositiveIntegerField(db_default=0, default=0, verbose_name='unread'),
        ),
        migrations.AlterField(
            model_name='chat',
            name='conversation',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='chats', to='sending.conversation', verbose_name='conversation'),
        ),
        migrations.AddIndex(
            model_name='chat',
            index=models.Index(fields=['conversation', 'id'], include=('deleted_at',), name='conversation_chats'),
        ),
        migrations.AddIndex(
            model_name='conversation',
            index=models.Index(fields=['organization', '-last_message_at', '-id'], name='conversations_by_time'),
        ),
    ]
