# The deliveries are the workers' queue (events/delivery.py): an index of the pending
# ones, which the workers' claim walks oldest first; and the endpoint's column without
# a constraint nor an index of its own (events/models.py says why).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_organization_channel_to_sending'),
        ('events', '0001_initial'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='delivery',
            index=models.Index(condition=models.Q(('status', 'pending')), fields=['id'], name='pending_deliveries'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='endpoint',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='events.endpoint'),
        ),
    ]
