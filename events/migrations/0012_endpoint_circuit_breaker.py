from django.db import migrations, models


class Migration(migrations.Migration):
    """An endpoint that keeps failing is backed off as a whole (docs/events.md)."""

    dependencies = [
        ("events", "0011_delivery_heads_by_endpoint"),
    ]

    operations = [
        migrations.AddField(
            model_name="endpoint",
            name="failures_in_a_row",
            field=models.PositiveIntegerField(default=0, verbose_name="failures in a row"),
        ),
        migrations.AddField(
            model_name="endpoint",
            name="open_until",
            field=models.DateTimeField(blank=True, null=True, verbose_name="backed off until"),
        ),
        migrations.AddField(
            model_name="endpoint",
            name="times_opened",
            field=models.PositiveSmallIntegerField(default=0, verbose_name="times backed off"),
        ),
    ]
