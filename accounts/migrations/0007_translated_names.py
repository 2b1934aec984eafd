import django.db.models.deletion
import uuid
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_organization_channel_to_sending'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='apitoken',
            options={'ordering': ['id'], 'verbose_name': 'API token', 'verbose_name_plural': 'API tokens'},
        ),
        migrations.AlterModelOptions(
            name='membership',
            options={'verbose_name': 'membership', 'verbose_name_plural': 'memberships'},
        ),
        migrations.AlterModelOptions(
            name='organization',
            options={'ordering': ['id'], 'verbose_name': 'organization', 'verbose_name_plural': 'organizations'},
        ),
        migrations.AlterField(
            model_name='apitoken',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='apitoken',
            name='digest',
            field=models.CharField(max_length=64, verbose_name='digest'),
        ),
        migrations.AlterField(
            model_name='apitoken',
            name='last_used_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='last used at'),
        ),
        migrations.AlterField(
            model_name='apitoken',
            name='name',
            field=models.CharField(blank=True, max_length=255, verbose_name='name'),
        ),
        migrations.AlterField(
            model_name='apitoken',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='tokens', to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='apitoken',
            name='prefix',
            field=models.CharField(max_length=16, unique=True, verbose_name='prefix'),
        ),
        migrations.AlterField(
            model_name='apitoken',
            name='revoked_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='revoked at'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='organization',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='members', to='accounts.organization', verbose_name='organization'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='user',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='membership', to=settings.AUTH_USER_MODEL, verbose_name='user'),
        ),
        migrations.AlterField(
            model_name='organization',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='organization',
            name='name',
            field=models.CharField(max_length=255, unique=True, verbose_name='name'),
        ),
        migrations.AlterField(
            model_name='organization',
            name='rate_limit',
            field=models.PositiveIntegerField(blank=True, help_text='Requests per minute; empty for the API_RATE_LIMIT default.', null=True, verbose_name='rate limit'),
        ),
        migrations.AlterField(
            model_name='organization',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='uuid'),
        ),
    ]
