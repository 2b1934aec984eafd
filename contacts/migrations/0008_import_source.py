from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('contacts', '0007_contact_imports'),
    ]

    operations = [
        migrations.AddField(
            model_name='contactimport',
            name='source',
            field=models.TextField(blank=True, default='', verbose_name='file'),
        ),
    ]
