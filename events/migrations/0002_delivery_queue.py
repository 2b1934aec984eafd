# The deliveries are the workers' queue (events/delivery.py): an index of the pending
# ones, which the workers' claim walks oldest first.

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
    ]
