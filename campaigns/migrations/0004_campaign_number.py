"""Campaigns go from one of the organization's numbers (existing ones: the default),
and the pace and the new conversations are kept per number. The pace rows hold only
the next moment a message may leave: they are made again as campaigns start."""

import django.db.models.deletion
from django.db import migrations, models


def backfill(apps, schema_editor):
    Number = apps.get_model('business_numbers', 'Number')
    db = schema_editor.connection.alias
    defaults = models.Subquery(
        Number.objects.using(db)
        .filter(organization_id=models.OuterRef('organization_id'), is_default=True)
        .values('pk')[:1]
    )
    for name in ('Campaign', 'NewConversation'):
        apps.get_model('campaigns', name).objects.using(db).update(number=defaults)


class Migration(migrations.Migration):

    dependencies = [
        ('business_numbers', '0002_many_numbers'),
        ('campaigns', '0003_paused_waiting_limits'),
    ]

    operations = [
        migrations.DeleteModel(name='SendPace'),
        migrations.CreateModel(
            name='SendPace',
            fields=[
                ('number', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='business_numbers.number')),
                ('next_at', models.DateTimeField()),
            ],
        ),
        migrations.AddField(
            model_name='campaign',
            name='number',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.RESTRICT, related_name='+', to='business_numbers.number', verbose_name='number'),
        ),
        migrations.AddField(
            model_name='newconversation',
            name='number',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='business_numbers.number'),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='campaign',
            name='number',
            field=models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name='+', to='business_numbers.number', verbose_name='number'),
        ),
        migrations.AlterField(
            model_name='newconversation',
            name='number',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='business_numbers.number'),
        ),
        migrations.RemoveIndex(model_name='newconversation', name='new_conversations_by_time'),
        migrations.RemoveIndex(model_name='newconversation', name='new_conversations_by_phone'),
        migrations.AddIndex(
            model_name='newconversation',
            index=models.Index(fields=['number', 'started_at'], name='new_conversations_by_time'),
        ),
        migrations.AddIndex(
            model_name='newconversation',
            index=models.Index(fields=['number', 'phone'], name='new_conversations_by_phone'),
        ),
    ]
