"""WorkerHeartbeat and PeriodicRun now belong to the worker app (worker.0001 adopts
their tables): they leave this app's state only; the tables stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('base', '0002_worker_heartbeats_and_periodic_runs'),
        ('worker', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='WorkerHeartbeat'),
                migrations.DeleteModel(name='PeriodicRun'),
            ],
            database_operations=[],
        ),
    ]
