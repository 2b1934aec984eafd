import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0005_idempotencykey_to_base'),
        ('canned_replies', '0001_initial'),
        ('sending', '0004_channel_settings_from_organizations'),
    ]

    operations = [
        migrations.CreateModel(
            name='AutoReply',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('message', models.TextField(help_text="The reply's text, as matched.")),
                ('state', models.CharField(choices=[('pending', 'pending'), ('sending', 'sending'), ('retrying', 'retrying'), ('sent', 'sent'), ('failed', 'failed'), ('unknown', 'unknown')], default='pending', max_length=16)),
                ('attempts', models.PositiveSmallIntegerField(default=0)),
                ('last_error', models.TextField(blank=True, default='')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('canned_reply', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='canned_replies.cannedreply')),
                ('inbound', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='auto_reply', to='sending.chat')),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to='accounts.organization')),
                ('reply', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='sending.chat')),
            ],
            options={
                'verbose_name_plural': 'auto-replies',
                'ordering': ['id'],
            },
        ),
    ]
