#
# The channel settings move from accounts.Organization to this model; the values follow
# in 0004, and accounts.0006 then drops the old columns.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0005_idempotencykey_to_base'),
        ('sending', '0002_chat_status_events'),
    ]

    operations = [
        migrations.CreateModel(
            name='Channel',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('sandbox', 'Sandbox (messages stay on this server)'), ('cloud_api', 'WhatsApp Cloud API')], default='sandbox', max_length=16, verbose_name='channel')),
                ('phone_number_id', models.CharField(blank=True, default='', max_length=32)),
                ('business_account_id', models.CharField(blank=True, default='', max_length=32)),
                ('access_token', models.TextField(blank=True, default='')),
                ('app_secret', models.CharField(blank=True, default='', max_length=255)),
                ('verify_token', models.CharField(blank=True, default='', max_length=255)),
                ('organization', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='channel_settings', to='accounts.organization')),
            ],
            options={
                'default_permissions': (),
            },
        ),
    ]
