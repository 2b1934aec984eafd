"""Many numbers per organization: the channel's table becomes the numbers' (a foreign key
to the organization, a uuid, a label, a default), and templates name a number. The data
follows in 0003."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


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
    ]
