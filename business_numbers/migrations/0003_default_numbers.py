"""Each channel becomes its organization's default number (with a uuid), every
organization without one gets a sandbox default, and each template names its
organization's default number. Data only: PostgreSQL does not alter a table whose rows
the same transaction changed."""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


def make_defaults(apps, schema_editor):
    Organization = apps.get_model('accounts', 'Organization')
    Number = apps.get_model('business_numbers', 'Number')
    MessageTemplate = apps.get_model('business_numbers', 'MessageTemplate')
    db = schema_editor.connection.alias
    for number in Number.objects.using(db).filter(uuid__isnull=True):
        Number.objects.using(db).filter(pk=number.pk).update(uuid=uuid.uuid4(), is_default=True)
    have = Number.objects.using(db).values('organization_id')
    Number.objects.using(db).bulk_create(
        [
            Number(organization_id=pk, kind='sandbox', is_default=True, uuid=uuid.uuid4())
            for pk in Organization.objects.using(db).exclude(pk__in=have).values_list('pk', flat=True)
        ]
    )
    defaults = models.Subquery(
        Number.objects.using(db)
        .filter(organization_id=models.OuterRef('organization_id'), is_default=True)
        .values('pk')[:1]
    )
    MessageTemplate.objects.using(db).update(number=defaults)


class Migration(migrations.Migration):

    dependencies = [
        ('business_numbers', '0002_many_numbers'),
    ]

    operations = [
        migrations.RunPython(make_defaults, migrations.RunPython.noop),
    ]
