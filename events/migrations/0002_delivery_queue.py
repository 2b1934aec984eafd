"""The deliveries are the workers' queue (events/delivery.py):

- an index of the pending ones, which the workers' claim walks oldest first;
- on PostgreSQL, a trigger that NOTIFYs the workers when deliveries are inserted (once
  per statement: an inbound webhook's deliveries are one insert). PostgreSQL delivers
  it when the inserting transaction commits, never for a rollback.
"""

from django.db import migrations, models

NOTIFY = """
CREATE FUNCTION events_notify_delivery_workers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('event_deliveries', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER events_delivery_inserted AFTER INSERT ON events_delivery
    FOR EACH STATEMENT EXECUTE FUNCTION events_notify_delivery_workers();
"""
NO_NOTIFY = """
DROP TRIGGER events_delivery_inserted ON events_delivery;
DROP FUNCTION events_notify_delivery_workers();
"""


def on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


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
        migrations.RunPython(on_postgresql(NOTIFY), on_postgresql(NO_NOTIFY)),
    ]
