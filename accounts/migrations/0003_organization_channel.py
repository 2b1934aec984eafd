from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0002_cache_table'),
    ]

    operations = [
        migrations.AddField(
            model_name='organization',
            name='access_token',
            field=models.TextField(blank=True, default=''),
        ),
        migrations.AddField(
            model_name='organization',
            name='app_secret',
            field=models.CharField(blank=True, default='', max_length=255),
        ),
        migrations.AddField(
            model_name='organization',
            name='business_account_id',
            field=models.CharField(blank=True, default='', max_length=32),
        ),
        migrations.AddField(
            model_name='organization',
            name='channel',
            field=models.CharField(choices=[('sandbox', 'Sandbox (messages stay on this server)'), ('cloud_api', 'WhatsApp Cloud API')], default='sandbox', max_length=16),
        ),
        migrations.AddField(
            model_name='organization',
            name='phone_number_id',
            field=models.CharField(blank=True, default='', max_length=32),
        ),
        migrations.AddField(
            model_name='organization',
            name='verify_token',
            field=models.CharField(blank=True, default='', max_length=255),
        ),
    ]
