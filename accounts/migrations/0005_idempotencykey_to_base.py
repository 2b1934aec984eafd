"""IdempotencyKey moves to the base app (messaging_project.api, label `base`).

Only the model's state leaves accounts; its table is renamed to the base app's name
and keeps every row. base.0001_initial takes the model over.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0004_idempotency_keys'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.AlterModelTable(name='IdempotencyKey', table='base_idempotencykey'),
            ],
            state_operations=[
                migrations.DeleteModel(name='IdempotencyKey'),
            ],
        ),
    ]
