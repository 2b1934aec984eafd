import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0007_translated_names'),
        ('contacts', '0006_translated_names'),
    ]

    operations = [
        migrations.AddField(
            model_name='contact',
            name='metadata',
            field=models.JSONField(blank=True, null=True, verbose_name='metadata'),
        ),
        migrations.CreateModel(
            name='ContactImport',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uuid', models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid')),
                ('created_by', models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created at')),
                ('deleted_at', models.DateTimeField(blank=True, null=True, verbose_name='deleted at')),
                ('status', models.CharField(choices=[('pending', 'pending'), ('running', 'running'), ('completed', 'completed'), ('failed', 'failed')], default='pending', max_length=16, verbose_name='status')),
                ('file_name', models.CharField(blank=True, default='', max_length=255, verbose_name='file name')),
                ('on_duplicate', models.CharField(choices=[('skip', 'skip'), ('update', 'update')], default='skip', max_length=8, verbose_name='on duplicate')),
                ('rows', models.JSONField(blank=True, default=list, verbose_name='rows')),
                ('total', models.PositiveIntegerField(default=0, verbose_name='total')),
                ('processed', models.PositiveIntegerField(default=0, verbose_name='processed')),
                ('created', models.PositiveIntegerField(default=0, verbose_name='created')),
                ('updated', models.PositiveIntegerField(default=0, verbose_name='updated')),
                ('skipped', models.PositiveIntegerField(default=0, verbose_name='skipped')),
                ('failed', models.PositiveIntegerField(default=0, verbose_name='failed')),
                ('errors', models.JSONField(blank=True, default=list, verbose_name='errors')),
                ('started_at', models.DateTimeField(blank=True, null=True, verbose_name='started at')),
                ('finished_at', models.DateTimeField(blank=True, null=True, verbose_name='finished at')),
                ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated at')),
                ('contact_group', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='contacts.contactgroup', verbose_name='contact group')),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization')),
            ],
            options={
                'verbose_name': 'contact import',
                'verbose_name_plural': 'contact imports',
                'ordering': ['id'],
                'abstract': False,
            },
        ),
    ]
