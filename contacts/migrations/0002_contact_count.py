import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Count


def count_existing_contacts(apps, schema_editor):
    """Start every organization's counter from its live contacts."""
    Contact = apps.get_model("contacts", "Contact")
    ContactCount = apps.get_model("contacts", "ContactCount")
    totals = (
        Contact.objects.filter(deleted_at__isnull=True)
        .values("organization_id")
        .annotate(live=Count("id"))
        .order_by()
    )
    ContactCount.objects.bulk_create(
        ContactCount(organization_id=row["organization_id"], live=row["live"]) for row in totals
    )


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0001_initial'),
        ('contacts', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='ContactCount',
            fields=[
                ('organization', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='accounts.organization')),
                ('live', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(count_existing_contacts, migrations.RunPython.noop),
    ]
