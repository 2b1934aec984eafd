
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0008_membership_role'),
    ]

    operations = [
        migrations.CreateModel(
            name='StaffMember',
            fields=[
            ],
            options={
                'verbose_name': 'staff member',
                'verbose_name_plural': 'staff members',
                'proxy': True,
                'indexes': [],
                'constraints': [],
            },
            bases=('accounts.membership',),
        ),
    ]
