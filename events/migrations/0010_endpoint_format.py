from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("events", "0009_every_event_type"),
    ]

    operations = [
        migrations.AddField(
            model_name='endpoint',
            name='format',
            field=models.CharField(choices=[('standard', 'Standard'), ('swiftchats', 'Swiftchats (original product)')], default='standard', max_length=16, verbose_name='format'),
        ),
    ]
