import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0007_translated_names'),
        ('campaigns', '0002_translated_names'),
    ]

    operations = [
        migrations.AddField(
            model_name='campaign',
            name='paused_reason',
            field=models.CharField(blank=True, choices=[('template_not_approved', 'the template is not approved'), ('quality_red', "the number's quality is red"), ('account_restricted', 'the account is restricted or banned')], default='', max_length=32, verbose_name='paused because'),
        ),
        migrations.AlterField(
            model_name='campaign',
            name='status',
            field=models.CharField(choices=[('scheduled', 'scheduled'), ('running', 'running'), ('completed', 'completed'), ('cancelled', 'cancelled'), ('paused', 'paused')], default='scheduled', max_length=16, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='recipient',
            name='status',
            field=models.CharField(choices=[('pending', 'pending'), ('sending', 'sending'), ('sent', 'sent'), ('failed', 'failed'), ('skipped', 'skipped'), ('unknown', 'unknown'), ('waiting', 'waiting')], default='pending', max_length=16),
        ),
        migrations.CreateModel(
            name='NewConversation',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('phone', models.CharField(max_length=64)),
                ('started_at', models.DateTimeField()),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='accounts.organization')),
            ],
            options={
                'indexes': [models.Index(fields=['organization', 'started_at'], name='new_conversations_by_time'), models.Index(fields=['organization', 'phone'], name='new_conversations_by_phone')],
            },
        ),
    ]
