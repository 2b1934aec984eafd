"""Each organization's count of the changes staff and the API made to its conversations,
which the admin list's live check reads."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("inbox", "0002_conversation_totals"),
    ]

    operations = [
        migrations.AddField(
            model_name="conversationtotal",
            name="changes",
            field=models.PositiveBigIntegerField(db_default=0, default=0),
        ),
    ]
