import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0007_translated_names'),
        ('canned_replies', '0001_initial'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='cannedreply',
            options={'ordering': ['id'], 'verbose_name': 'canned reply', 'verbose_name_plural': 'canned replies'},
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='created_by',
            field=models.PositiveIntegerField(default=0, help_text='0 for the API, else a user id.', verbose_name='created by'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='deleted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='deleted at'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='deleted_by',
            field=models.PositiveIntegerField(blank=True, null=True, verbose_name='deleted by'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='match_criteria',
            field=models.CharField(choices=[('contains', 'contains'), ('exact match', 'exact match'), ('starts with', 'starts with'), ('ends with', 'ends with')], max_length=16, verbose_name='match criteria'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='metadata',
            field=models.JSONField(verbose_name='metadata'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='name',
            field=models.CharField(max_length=255, verbose_name='name'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='trigger',
            field=models.CharField(max_length=255, verbose_name='trigger'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='cannedreply',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid'),
        ),
    ]
