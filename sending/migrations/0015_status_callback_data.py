from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0007_translated_names'),
        ("sending", "0014_chat_source_sent_at"),
    ]

    operations = [
        migrations.AddField(
            model_name='chatstatusevent',
            name='callback_data',
            field=models.CharField(blank=True, default='', max_length=512),
        ),
        migrations.AddIndex(
            model_name='chatstatusevent',
            index=models.Index(condition=models.Q(('chat__isnull', True), models.Q(('callback_data', ''), _negated=True)), fields=['organization', 'callback_data'], name='status_event_callback'),
        ),
    ]
