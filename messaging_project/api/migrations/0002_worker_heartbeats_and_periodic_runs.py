"""The worker's heartbeats and the scheduler's periods; and on django_tasks_db's table:

- two indexes it does not have: the running tasks by start (the recovery of dead
  workers' tasks looks every few seconds) and the finished ones by end (the hourly
  prune), in plain SQL that PostgreSQL and SQLite both understand;
- on PostgreSQL, a trigger that NOTIFYs the workers when tasks are inserted. PostgreSQL
  delivers a notification when the inserting transaction commits, never for a rollback,
  so an idle worker starts a task as soon as it can see it (messaging_project/worker/runner.py).
"""

from django.db import migrations, models

NOTIFY = """
CREATE FUNCTION base_notify_task_workers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('messaging_tasks', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER base_task_enqueued AFTER INSERT ON django_tasks_database_dbtaskresult
    FOR EACH STATEMENT EXECUTE FUNCTION base_notify_task_workers();
"""
NO_NOTIFY = """
DROP TRIGGER base_task_enqueued ON django_tasks_database_dbtaskresult;
DROP FUNCTION base_notify_task_workers();
"""


def on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


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
        migrations.RunPython(on_postgresql(NOTIFY), on_postgresql(NO_NOTIFY)),
    ]
