"""The clean-up tasks moved from messaging_project.api.tasks to
messaging_project.worker.tasks: tasks still waiting under the old path run under the
new one."""

from django.db import migrations

MOVED = ('prune_task_results', 'purge_expired_sessions', 'purge_bookkeeping')


def rename(apps, schema_editor, source, target):
    DBTaskResult = apps.get_model('django_tasks_database', 'DBTaskResult')
    waiting = DBTaskResult.objects.using(schema_editor.connection.alias).filter(status='READY')
    for name in MOVED:
        waiting.filter(task_path=f'{source}.{name}').update(task_path=f'{target}.{name}')


def forwards(apps, schema_editor):
    rename(apps, schema_editor, 'messaging_project.api.tasks', 'messaging_project.worker.tasks')


def backwards(apps, schema_editor):
    rename(apps, schema_editor, 'messaging_project.worker.tasks', 'messaging_project.api.tasks')


class Migration(migrations.Migration):

    dependencies = [
        ('worker', '0001_initial'),
        ('django_tasks_database', '0021_conditional_partial_index_ordering'),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
