"""Existing campaigns and new conversations are their organization's default number's.
Data only: PostgreSQL does not alter a table whose rows the same transaction changed."""

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
        ('campaigns', '0004_campaign_number'),
        ('business_numbers', '0003_default_numbers'),
    ]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
