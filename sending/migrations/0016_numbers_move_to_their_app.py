"""Channel and MessageTemplate now belong to business_numbers (its 0001 adopts their
tables): removed from sending's state only."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0015_status_callback_data'),
        ('business_numbers', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='MessageTemplate'),
                migrations.DeleteModel(name='Channel'),
            ],
        ),
    ]
