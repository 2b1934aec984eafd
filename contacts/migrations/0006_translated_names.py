import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0007_translated_names'),
        ('contacts', '0005_opt_out'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='contact',
            options={'ordering': ['id'], 'verbose_name': 'contact', 'verbose_name_plural': 'contacts'},
        ),
        migrations.AlterModelOptions(
            name='contactgroup',
            options={'ordering': ['id'], 'verbose_name': 'contact group', 'verbose_name_plural': 'contact groups'},
        ),
        migrations.AlterField(
            model_name='contact',
            name='address',
            field=models.JSONField(blank=True, null=True, verbose_name='address'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='avatar',
            field=models.CharField(blank=True, max_length=255, null=True, verbose_name='avatar'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='contact_group',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='contacts', to='contacts.contactgroup', verbose_name='contact group'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='created_by',
            field=models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='deleted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='deleted at'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='email',
            field=models.EmailField(blank=True, max_length=255, null=True, verbose_name='email'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='first_name',
            field=models.CharField(blank=True, max_length=255, null=True, verbose_name='first name'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='is_favorite',
            field=models.BooleanField(default=False, verbose_name='favourite'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='last_name',
            field=models.CharField(blank=True, max_length=255, null=True, verbose_name='last name'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='opted_out',
            field=models.BooleanField(default=False, verbose_name='opted out'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='phone',
            field=models.CharField(blank=True, help_text='Digits only, country code first; empty when WhatsApp withholds it.', max_length=20, verbose_name='phone'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid'),
        ),
        migrations.AlterField(
            model_name='contactgroup',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='contactgroup',
            name='created_by',
            field=models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by'),
        ),
        migrations.AlterField(
            model_name='contactgroup',
            name='deleted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='deleted at'),
        ),
        migrations.AlterField(
            model_name='contactgroup',
            name='name',
            field=models.CharField(max_length=255, verbose_name='name'),
        ),
        migrations.AlterField(
            model_name='contactgroup',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='contactgroup',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='contactgroup',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid'),
        ),
        migrations.AlterField(
            model_name='optoutwords',
            name='organization',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='opt_out_words', to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='optoutwords',
            name='start_words',
            field=models.TextField(blank=True, default='', help_text='One word or phrase a line, besides START.', verbose_name='start words'),
        ),
        migrations.AlterField(
            model_name='optoutwords',
            name='stop_words',
            field=models.TextField(blank=True, default='', help_text='One word or phrase a line, besides STOP.', verbose_name='stop words'),
        ),
    ]
