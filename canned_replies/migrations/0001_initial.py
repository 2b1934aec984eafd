import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('accounts', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='CannedReply',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uuid', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('created_by', models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('deleted_at', models.DateTimeField(blank=True, null=True)),
                ('name', models.CharField(max_length=255)),
                ('trigger', models.CharField(max_length=255)),
                ('match_criteria', models.CharField(choices=[('contains', 'contains'), ('exact match', 'exact match'), ('starts with', 'starts with'), ('ends with', 'ends with')], max_length=16)),
                ('metadata', models.JSONField()),
                ('deleted_by', models.PositiveIntegerField(blank=True, null=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
            ],
            options={
                'verbose_name_plural': 'canned replies',
                'ordering': ['id'],
                'abstract': False,
                'indexes': [models.Index(condition=models.Q(('deleted_at__isnull', True)), fields=['organization', 'id'], name='live_canned_replies')],
            },
        ),
    ]
