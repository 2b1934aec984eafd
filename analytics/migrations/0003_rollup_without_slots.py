# The slot leaves the rollup's key, once 0002 has added each day's slots up (in its own
# transaction: PostgreSQL alters no table with the merge's checks still pending).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0002_increments'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='dailybillable',
            name='daily_billable_key',
        ),
        migrations.RemoveConstraint(
            model_name='dailymessages',
            name='daily_messages_key',
        ),
        migrations.RemoveField(
            model_name='dailybillable',
            name='slot',
        ),
        migrations.RemoveField(
            model_name='dailymessages',
            name='slot',
        ),
        migrations.AddConstraint(
            model_name='dailybillable',
            constraint=models.UniqueConstraint(fields=('organization', 'day', 'number', 'category'), name='daily_billable_key'),
        ),
        migrations.AddConstraint(
            model_name='dailymessages',
            constraint=models.UniqueConstraint(fields=('organization', 'day', 'number'), name='daily_messages_key'),
        ),
    ]
