import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0007_translated_names'),
        ('contacts', '0006_translated_names'),
        ('sending', '0012_channel_health'),
    ]

    operations = [
        migrations.CreateModel(
            name='UnhandledWebhookItem',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('field', models.CharField(max_length=64, verbose_name='field')),
                ('count', models.PositiveIntegerField(default=0, verbose_name='count')),
                ('last_payload', models.JSONField(blank=True, null=True, verbose_name='last payload')),
                ('first_seen', models.DateTimeField(verbose_name='first seen')),
                ('last_seen', models.DateTimeField(verbose_name='last seen')),
            ],
            options={
                'verbose_name': 'unhandled webhook item',
                'verbose_name_plural': 'unhandled webhook items',
                'ordering': ['-last_seen', 'id'],
            },
        ),
        migrations.AddField(
            model_name='channel',
            name='alerts',
            field=models.JSONField(blank=True, default=list, verbose_name='alerts'),
        ),
        migrations.AddIndex(
            model_name='chat',
            index=models.Index(condition=models.Q(('type', 'inbound')), fields=['contact', 'created_at'], name='contact_inbound_chats'),
        ),
        migrations.AddField(
            model_name='unhandledwebhookitem',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AddConstraint(
            model_name='unhandledwebhookitem',
            constraint=models.UniqueConstraint(fields=('organization', 'field'), name='unique_unhandled_webhook_field'),
        ),
    ]
