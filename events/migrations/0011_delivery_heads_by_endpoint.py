from django.db import migrations, models


class Migration(migrations.Migration):
    """The claim reads each endpoint's head of due deliveries through an index, instead
    of numbering every pending delivery (docs/events.md)."""

    dependencies = [
        ("events", "0010_endpoint_format"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="delivery",
            name="pending_deliveries",
        ),
        migrations.AddIndex(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("claimed_until__isnull", True), ("status", "pending")),
                fields=["endpoint", "next_attempt_at", "id"],
                name="due_deliveries",
            ),
        ),
        migrations.AddIndex(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("claimed_until__isnull", False), ("status", "pending")),
                fields=["endpoint", "claimed_until"],
                name="leased_deliveries",
            ),
        ),
    ]
