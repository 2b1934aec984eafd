"""The worker's heartbeats and the scheduler's periods; and two indexes on
django_tasks_db's table, which it does not have: the running tasks by start (the
recovery of dead workers' tasks looks every few seconds) and the finished ones by end
(the hourly prune). Plain SQL that PostgreSQL and SQLite both understand."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('base', '0001_initial'),
        ('django_tasks_database', '0021_conditional_partial_index_ordering'),
    ]

    operations = [
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
                'constraints': [models.UniqueConstraint(fields=('job', 'period'), name='unique_periodic_run')],
            },
        ),
        migrations.RunSQL(
            "CREATE INDEX base_running_tasks ON django_tasks_database_dbtaskresult "
            "(started_at) WHERE status = 'RUNNING'",
            "DROP INDEX base_running_tasks",
        ),
        migrations.RunSQL(
            "CREATE INDEX base_finished_tasks ON django_tasks_database_dbtaskresult "
            "(finished_at) WHERE finished_at IS NOT NULL",
            "DROP INDEX base_finished_tasks",
        ),
    ]
