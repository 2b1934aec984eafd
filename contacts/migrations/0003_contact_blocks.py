import django.db.models.deletion
from django.db import migrations, models

# Every organization's total (block -1) and blocks of 1,000 ids, counted in one
# statement (the same SQL on SQLite and PostgreSQL); ContactCount's totals are not
# copied, so both rows come from the same count.
COUNT_BLOCKS_SQL = """
INSERT INTO contacts_contactblock (organization_id, block, live)
SELECT organization_id, -1, COUNT(*) FROM contacts_contact
WHERE deleted_at IS NULL GROUP BY organization_id
UNION ALL
SELECT organization_id, id / 1000, COUNT(*) FROM contacts_contact
WHERE deleted_at IS NULL GROUP BY organization_id, id / 1000
"""


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0004_idempotency_keys'),
        ('contacts', '0002_contact_count'),
    ]

    operations = [
        migrations.CreateModel(
            name='ContactBlock',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('block', models.BigIntegerField()),
                ('live', models.BigIntegerField(default=0)),
                ('organization', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='accounts.organization')),
            ],
        ),
        migrations.AddConstraint(
            model_name='contactblock',
            constraint=models.UniqueConstraint(fields=('organization', 'block'), name='unique_contact_block'),
        ),
        migrations.RunSQL(COUNT_BLOCKS_SQL, migrations.RunSQL.noop),
        migrations.DeleteModel(
            name='ContactCount',
        ),
    ]
