from django.db import migrations, models


class Migration(migrations.Migration):
    """Menus: the `button` criterion (a tapped button's id) beside the text rules."""

    dependencies = [
        ("canned_replies", "0002_translated_names"),
    ]

    operations = [
        migrations.AlterField(
            model_name="cannedreply",
            name="match_criteria",
            field=models.CharField(
                choices=[
                    ("contains", "contains"),
                    ("exact match", "exact match"),
                    ("starts with", "starts with"),
                    ("ends with", "ends with"),
                    ("button", "button"),
                ],
                max_length=16,
                verbose_name="match criteria",
            ),
        ),
    ]
