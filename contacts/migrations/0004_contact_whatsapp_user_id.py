from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_organization_channel_to_sending'),
        ('contacts', '0003_contact_blocks'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='contact',
            name='unique_live_contact_phone',
        ),
        migrations.AddField(
            model_name='contact',
            name='user_id',
            field=models.CharField(blank=True, default='', max_length=160, verbose_name='WhatsApp user id'),
        ),
        migrations.AlterField(
            model_name='contact',
            name='phone',
            field=models.CharField(blank=True, help_text='Digits only, country code first; empty when WhatsApp withholds it.', max_length=20),
        ),
        migrations.AddConstraint(
            model_name='contact',
            constraint=models.UniqueConstraint(condition=models.Q(('deleted_at__isnull', True), models.Q(('phone', ''), _negated=True)), fields=('organization', 'phone'), name='unique_live_contact_phone'),
        ),
        migrations.AddConstraint(
            model_name='contact',
            constraint=models.UniqueConstraint(condition=models.Q(('deleted_at__isnull', True), models.Q(('user_id', ''), _negated=True)), fields=('organization', 'user_id'), name='unique_live_contact_user_id'),
        ),
    ]
