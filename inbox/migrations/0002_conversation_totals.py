"""Each organization's count of the conversations it has already."""

from django.db import migrations

COUNT = """
    INSERT INTO inbox_conversationtotal (organization_id, conversations)
    SELECT organization_id, COUNT(*) FROM sending_conversation GROUP BY organization_id
"""


class Migration(migrations.Migration):

    dependencies = [
        ('inbox', '0001_initial'),
        ('sending', '0021_conversation_times'),
    ]

    operations = [
        migrations.RunSQL(COUNT, migrations.RunSQL.noop),
    ]
