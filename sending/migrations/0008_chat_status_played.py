from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0007_chat_media'),
    ]

    operations = [
        migrations.AlterField(
            model_name='chat',
            name='status',
            field=models.CharField(choices=[('accepted', 'accepted'), ('held_for_quality_assessment', 'held for quality assessment'), ('paused', 'paused'), ('sent', 'sent'), ('delivered', 'delivered'), ('read', 'read'), ('played', 'played'), ('failed', 'failed'), ('received', 'received')], max_length=32),
        ),
        migrations.AlterField(
            model_name='chatstatusevent',
            name='status',
            field=models.CharField(choices=[('accepted', 'accepted'), ('held_for_quality_assessment', 'held for quality assessment'), ('paused', 'paused'), ('sent', 'sent'), ('delivered', 'delivered'), ('read', 'read'), ('played', 'played'), ('failed', 'failed'), ('received', 'received')], max_length=32),
        ),
    ]
