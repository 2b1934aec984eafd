"""The channel settings left the organization for sending.Channel: their columns go, once
sending.0004 has copied every value to the new rows."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0005_idempotencykey_to_base'),
        ('sending', '0004_channel_settings_from_organizations'),
    ]

    operations = [
        migrations.RemoveField(model_name='organization', name='access_token'),
        migrations.RemoveField(model_name='organization', name='app_secret'),
        migrations.RemoveField(model_name='organization', name='business_account_id'),
        migrations.RemoveField(model_name='organization', name='channel'),
        migrations.RemoveField(model_name='organization', name='phone_number_id'),
        migrations.RemoveField(model_name='organization', name='verify_token'),
    ]
