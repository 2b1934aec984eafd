import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_organization_channel_to_sending'),
        ('sending', '0006_auto_reply_media_type'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='chat',
            name='media_id',
        ),
        migrations.CreateModel(
            name='ChatMedia',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('media_id', models.CharField(help_text="WhatsApp's id of the media.", max_length=255)),
                ('kind', models.CharField(help_text='image, audio, video, document or sticker', max_length=16)),
                ('mime_type', models.CharField(blank=True, default='', max_length=255)),
                ('sha256', models.CharField(blank=True, default='', max_length=128)),
                ('file_name', models.CharField(blank=True, default='', help_text="A document's name, as sent.", max_length=255)),
                ('state', models.CharField(choices=[('pending', 'pending'), ('fetching', 'fetching'), ('retrying', 'retrying'), ('available', 'available'), ('failed', 'failed')], default='pending', max_length=16)),
                ('attempts', models.PositiveSmallIntegerField(default=0)),
                ('file', models.FileField(blank=True, default='', max_length=255, upload_to='')),
                ('size', models.PositiveBigIntegerField(blank=True, help_text='Bytes stored.', null=True)),
                ('last_error', models.TextField(blank=True, default='')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
            ],
            options={
                'verbose_name_plural': 'chat media',
                'ordering': ['id'],
            },
        ),
        migrations.AddField(
            model_name='chat',
            name='media',
            field=models.ForeignKey(blank=True, db_column='media_id', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='chats', to='sending.chatmedia'),
        ),
    ]
