import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_organization_channel_to_sending'),
        ('contacts', '0004_contact_whatsapp_user_id'),
    ]

    operations = [
        migrations.AddField(
            model_name='contact',
            name='opted_out',
            field=models.BooleanField(default=False),
        ),
        migrations.CreateModel(
            name='OptOutWords',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('stop_words', models.TextField(blank=True, default='', help_text='One word or phrase a line, besides STOP.')),
                ('start_words', models.TextField(blank=True, default='', help_text='One word or phrase a line, besides START.')),
                ('organization', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='opt_out_words', to='accounts.organization')),
            ],
            options={
                'verbose_name': 'opt-out words',
                'verbose_name_plural': 'opt-out words',
            },
        ),
    ]
