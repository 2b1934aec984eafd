from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0011_translated_names'),
    ]

    operations = [
        migrations.AddField(
            model_name='channel',
            name='account_status',
            field=models.CharField(blank=True, default='', max_length=32, verbose_name='account status'),
        ),
        migrations.AddField(
            model_name='channel',
            name='display_phone_number',
            field=models.CharField(blank=True, default='', max_length=32, verbose_name='display phone number'),
        ),
        migrations.AddField(
            model_name='channel',
            name='enforce_service_window',
            field=models.BooleanField(default=False, verbose_name='enforce the service window'),
        ),
        migrations.AddField(
            model_name='channel',
            name='health_updated_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='health updated at'),
        ),
        migrations.AddField(
            model_name='channel',
            name='messaging_limit',
            field=models.CharField(blank=True, default='', max_length=32, verbose_name='messaging limit'),
        ),
        migrations.AddField(
            model_name='channel',
            name='quality_rating',
            field=models.CharField(choices=[('GREEN', 'green'), ('YELLOW', 'yellow'), ('RED', 'red'), ('UNKNOWN', 'unknown')], default='UNKNOWN', max_length=16, verbose_name='quality rating'),
        ),
        migrations.AddField(
            model_name='channel',
            name='restrictions',
            field=models.JSONField(blank=True, default=list, verbose_name='restrictions'),
        ),
        migrations.AddField(
            model_name='channel',
            name='verified_name',
            field=models.CharField(blank=True, default='', max_length=255, verbose_name='verified name'),
        ),
        migrations.AddField(
            model_name='messagetemplate',
            name='quality',
            field=models.CharField(blank=True, default='', max_length=32, verbose_name='quality'),
        ),
        migrations.AddField(
            model_name='messagetemplate',
            name='reason',
            field=models.CharField(blank=True, default='', max_length=255, verbose_name='reason'),
        ),
    ]
