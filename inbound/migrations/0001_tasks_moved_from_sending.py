"""The auto-reply and media download tasks moved from sending.tasks to the inbound app
(inbound.auto_replies, inbound.media): tasks still waiting, or left running by a worker
that died, run under the new path."""

from django.db import migrations

MOVED = {
    'sending.tasks.send_auto_reply': 'inbound.auto_replies.send_auto_reply',
    'sending.tasks.fetch_media': 'inbound.media.fetch_media',
}
UNFINISHED = ('READY', 'RUNNING')


def rename(apps, schema_editor, moves):
    DBTaskResult = apps.get_model('django_tasks_database', 'DBTaskResult')
    unfinished = DBTaskResult.objects.using(schema_editor.connection.alias).filter(
        status__in=UNFINISHED
    )
    for source, target in moves.items():
        unfinished.filter(task_path=source).update(task_path=target)


def forwards(apps, schema_editor):
    rename(apps, schema_editor, MOVED)


def backwards(apps, schema_editor):
    rename(apps, schema_editor, {target: source for source, target in MOVED.items()})


class Migration(migrations.Migration):

    dependencies = [('worker', '0003_task_organization')]

    operations = [migrations.RunPython(forwards, backwards)]
