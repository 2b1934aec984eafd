"""Many numbers per organization: each existing channel becomes its organization's
default number (with a uuid), every organization without one gets a sandbox default,
and each template names its organization's default number."""

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
        ('accounts', '0007_translated_names'),
        ('business_numbers', '0001_initial'),
        ('sending', '0016_numbers_move_to_their_app'),
    ]

    operations = [
        migrations.AlterModelTable(name='number', table=None),
        migrations.AlterModelTable(name='messagetemplate', table=None),
        migrations.AlterField(
            model_name='number',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='numbers', to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AddField(
            model_name='number',
            name='uuid',
            field=models.UUIDField(editable=False, null=True, verbose_name='uuid'),
        ),
        migrations.AddField(
            model_name='number',
            name='label',
            field=models.CharField(blank=True, default='', max_length=100, verbose_name='label'),
        ),
        migrations.AddField(
            model_name='number',
            name='is_default',
            field=models.BooleanField(default=False, verbose_name='default'),
        ),
        migrations.AddField(
            model_name='number',
            name='created_by',
            field=models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by'),
        ),
        migrations.AddField(
            model_name='number',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, default=django.utils.timezone.now, verbose_name='created at'),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name='number',
            name='deleted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='deleted at'),
        ),
        migrations.AddField(
            model_name='messagetemplate',
            name='number',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.RESTRICT, related_name='templates', to='business_numbers.number', verbose_name='number'),
        ),
        migrations.RunPython(make_defaults, migrations.RunPython.noop),
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
