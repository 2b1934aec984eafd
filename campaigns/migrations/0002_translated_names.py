import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0007_translated_names'),
        ('campaigns', '0001_initial'),
        ('contacts', '0006_translated_names'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='campaign',
            options={'ordering': ['id'], 'verbose_name': 'campaign', 'verbose_name_plural': 'campaigns'},
        ),
        migrations.AlterField(
            model_name='campaign',
            name='contact_group',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='contacts.contactgroup', verbose_name='contact group'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='created_by',
            field=models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='deleted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='deleted at'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='finished_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='finished at'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='name',
            field=models.CharField(max_length=255, verbose_name='name'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='phones',
            field=models.JSONField(blank=True, help_text='The numbers as given.', null=True, verbose_name='phones'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='rate',
            field=models.PositiveIntegerField(help_text='Messages per second at most.', verbose_name='rate'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='scheduled_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='scheduled at'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='started_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='started at'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='status',
            field=models.CharField(choices=[('scheduled', 'scheduled'), ('running', 'running'), ('completed', 'completed'), ('cancelled', 'cancelled')], default='scheduled', max_length=16, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='template',
            field=models.JSONField(help_text='As /api/send/template takes it.', verbose_name='template'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid'),
        ),
    ]
