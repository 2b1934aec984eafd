# The deliveries with two indexes fewer, which nothing read: the endpoint's own
# (endpoint_deliveries begins with it) and msg_id's LIKE index (a plain unique constraint).
import django.db.models.deletion
import events.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_organization_channel_to_sending'),
        ('events', '0002_delivery_queue'),
    ]

    operations = [
        migrations.AlterField(
            model_name='delivery',
            name='endpoint',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='events.endpoint'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='msg_id',
            field=models.CharField(default=events.models.new_message_id, max_length=64),
        ),
        migrations.AddConstraint(
            model_name='delivery',
            constraint=models.UniqueConstraint(fields=('msg_id',), name='unique_delivery_msg_id'),
        ),
    ]
