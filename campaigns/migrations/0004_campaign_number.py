"""Campaigns go from one of the organization's numbers, and the pace and the new
conversations are kept per number. The pace rows hold only the next moment a message
may leave: they are made again as campaigns start. 0005 fills the numbers."""

import django.db.models.deletion
from django.db import migrations, models


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
    ]
