"""Chats say who wrote them (`source`) and keep WhatsApp's own time (`sent_at`); status
events keep pricing and conversation. Existing inbound chats were written by the customer."""

from django.db import migrations, models


def inbound_is_customer(apps, schema_editor):
    Chat = apps.get_model("sending", "Chat")
    Chat.objects.filter(type="inbound").update(source="customer")


class Migration(migrations.Migration):

    dependencies = [
        ("sending", "0013_account_news"),
    ]

    operations = [
        migrations.AddField(
            model_name='chat',
            name='sent_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='sent at'),
        ),
        migrations.AddField(
            model_name='chat',
            name='source',
            field=models.CharField(choices=[('customer', 'customer'), ('api', 'this service'), ('business_app', 'WhatsApp Business app')], db_default='api', default='api', max_length=16, verbose_name='source'),
        ),
        migrations.AddField(
            model_name='chatstatusevent',
            name='conversation',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='chatstatusevent',
            name='pricing',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='chat',
            name='status',
            field=models.CharField(choices=[('accepted', 'accepted'), ('held_for_quality_assessment', 'held for quality assessment'), ('paused', 'paused'), ('sent', 'sent'), ('delivered', 'delivered'), ('read', 'read'), ('played', 'played'), ('failed', 'failed'), ('received', 'received'), ('warning', 'warning'), ('deleted', 'deleted')], max_length=32, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='chatstatusevent',
            name='status',
            field=models.CharField(choices=[('accepted', 'accepted'), ('held_for_quality_assessment', 'held for quality assessment'), ('paused', 'paused'), ('sent', 'sent'), ('delivered', 'delivered'), ('read', 'read'), ('played', 'played'), ('failed', 'failed'), ('received', 'received'), ('warning', 'warning'), ('deleted', 'deleted')], max_length=32),
        ),
        migrations.RunPython(inbound_is_customer, migrations.RunPython.noop, elidable=True),
    ]
