"""IdempotencyKey, moved here from accounts: the table accounts.0005 renamed is adopted
as it is (no database change), and the model's content type follows it, so the
permissions on it are kept."""

import django.db.models.deletion
from django.db import migrations, models


def move_content_type(apps, schema_editor, source, target):
    ContentType = apps.get_model('contenttypes', 'ContentType')
    records = ContentType.objects.using(schema_editor.connection.alias)
    if not records.filter(app_label=target, model='idempotencykey').exists():
        records.filter(app_label=source, model='idempotencykey').update(app_label=target)


def forwards(apps, schema_editor):
    move_content_type(apps, schema_editor, 'accounts', 'base')


def backwards(apps, schema_editor):
    move_content_type(apps, schema_editor, 'base', 'accounts')


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('accounts', '0005_idempotencykey_to_base'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='IdempotencyKey',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.CharField(max_length=255)),
                        ('fingerprint', models.CharField(help_text='SHA-256 of method, path and body.', max_length=64)),
                        ('completed', models.BooleanField(default=False)),
                        ('response_status', models.PositiveSmallIntegerField(blank=True, null=True)),
                        ('response_body', models.JSONField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
                    ],
                    options={
                        'indexes': [models.Index(fields=['created_at'], name='idempotency_key_age')],
                        'constraints': [models.UniqueConstraint(fields=('organization', 'key'), name='unique_idempotency_key')],
                    },
                ),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
