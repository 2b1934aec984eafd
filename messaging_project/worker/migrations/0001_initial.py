"""WorkerHeartbeat and PeriodicRun, moved here from the API app (label `base`): their
tables, created by base.0002, are adopted as they are (no database change), and their
content types follow them, so the permissions on them are kept."""

from django.db import migrations, models

MODELS = ('workerheartbeat', 'periodicrun')


def move_content_types(apps, schema_editor, source, target):
    ContentType = apps.get_model('contenttypes', 'ContentType')
    records = ContentType.objects.using(schema_editor.connection.alias)
    for model in MODELS:
        if not records.filter(app_label=target, model=model).exists():
            records.filter(app_label=source, model=model).update(app_label=target)


def forwards(apps, schema_editor):
    move_content_types(apps, schema_editor, 'base', 'worker')


def backwards(apps, schema_editor):
    move_content_types(apps, schema_editor, 'worker', 'base')


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('base', '0002_worker_heartbeats_and_periodic_runs'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='WorkerHeartbeat',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('worker_id', models.CharField(max_length=64, unique=True)),
                        ('host', models.CharField(max_length=255)),
                        ('pid', models.PositiveIntegerField()),
                        ('threads', models.PositiveSmallIntegerField()),
                        ('started_at', models.DateTimeField(auto_now_add=True)),
                        ('last_seen', models.DateTimeField()),
                    ],
                    options={'db_table': 'base_workerheartbeat'},
                ),
                migrations.CreateModel(
                    name='PeriodicRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('job', models.CharField(max_length=100)),
                        ('period', models.DateTimeField(help_text='The start of the period it was enqueued for.')),
                        ('enqueued_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'base_periodicrun',
                        'constraints': [models.UniqueConstraint(fields=('job', 'period'), name='unique_periodic_run')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]
