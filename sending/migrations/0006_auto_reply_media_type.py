from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0005_auto_replies'),
    ]

    operations = [
        migrations.AddField(
            model_name='autoreply',
            name='media_type',
            field=models.CharField(blank=True, default='', max_length=16),
        ),
        migrations.AlterField(
            model_name='autoreply',
            name='message',
            field=models.TextField(help_text="The reply's text, or a media reply's URL, as matched."),
        ),
    ]
