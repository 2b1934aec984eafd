"""The numbers' and templates' new columns made required and unique, once 0002 filled
them: a migration of its own, since PostgreSQL does not alter a table whose rows the
same transaction changed."""

import uuid

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('business_numbers', '0003_default_numbers'),
    ]

    operations = [
        migrations.AlterField(
            model_name='number',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid'),
        ),
        migrations.AlterField(
            model_name='messagetemplate',
            name='number',
            field=models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name='templates', to='business_numbers.number', verbose_name='number'),
        ),
        migrations.AlterModelOptions(
            name='number',
            options={'ordering': ['-is_default', 'id'], 'verbose_name': 'WhatsApp number', 'verbose_name_plural': 'WhatsApp numbers'},
        ),
        migrations.RemoveConstraint(
            model_name='messagetemplate',
            name='unique_template_language',
        ),
        migrations.AddConstraint(
            model_name='messagetemplate',
            constraint=models.UniqueConstraint(fields=('number', 'name', 'language'), name='unique_number_template_language'),
        ),
        migrations.AddConstraint(
            model_name='number',
            constraint=models.UniqueConstraint(condition=models.Q(('deleted_at__isnull', True), models.Q(('phone_number_id', ''), _negated=True)), fields=('phone_number_id',), name='unique_live_phone_number_id'),
        ),
        migrations.AddConstraint(
            model_name='number',
            constraint=models.UniqueConstraint(condition=models.Q(('deleted_at__isnull', True), ('is_default', True)), fields=('organization',), name='one_default_number'),
        ),
    ]
