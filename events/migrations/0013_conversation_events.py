
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('events', '0012_endpoint_circuit_breaker'),
    ]

    operations = [
        migrations.AlterField(
            model_name='delivery',
            name='event',
            field=models.CharField(choices=[('message.received', 'Message received'), ('message.sent', 'Message sent'), ('message.status.update', 'Message status update'), ('message.updated', 'Message updated'), ('message.deleted', 'Message deleted'), ('history.imported', 'History imported'), ('contact.created', 'Contact created'), ('contact.updated', 'Contact updated'), ('contact.deleted', 'Contact deleted'), ('contacts.imported', 'Contacts imported'), ('group.created', 'Group created'), ('group.updated', 'Group updated'), ('group.deleted', 'Group deleted'), ('autoreply.created', 'Canned reply created'), ('autoreply.updated', 'Canned reply updated'), ('autoreply.deleted', 'Canned reply deleted'), ('webhook.disabled', 'Webhook endpoint turned off'), ('template.status.update', 'Template status update'), ('channel.updated', 'Channel updated'), ('conversation.created', 'Conversation created'), ('conversation.updated', 'Conversation updated')], max_length=32, verbose_name='event'),
        ),
        migrations.AlterField(
            model_name='emission',
            name='event',
            field=models.CharField(choices=[('message.received', 'Message received'), ('message.sent', 'Message sent'), ('message.status.update', 'Message status update'), ('message.updated', 'Message updated'), ('message.deleted', 'Message deleted'), ('history.imported', 'History imported'), ('contact.created', 'Contact created'), ('contact.updated', 'Contact updated'), ('contact.deleted', 'Contact deleted'), ('contacts.imported', 'Contacts imported'), ('group.created', 'Group created'), ('group.updated', 'Group updated'), ('group.deleted', 'Group deleted'), ('autoreply.created', 'Canned reply created'), ('autoreply.updated', 'Canned reply updated'), ('autoreply.deleted', 'Canned reply deleted'), ('webhook.disabled', 'Webhook endpoint turned off'), ('template.status.update', 'Template status update'), ('channel.updated', 'Channel updated'), ('conversation.created', 'Conversation created'), ('conversation.updated', 'Conversation updated')], max_length=32),
        ),
    ]
