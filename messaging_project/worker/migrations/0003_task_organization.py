import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('django_tasks_database', '0021_conditional_partial_index_ordering'),
        ('worker', '0002_clean_up_task_paths'),
    ]

    operations = [
        migrations.CreateModel(
            name='TaskOrganization',
            fields=[
                ('task', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='organization', serialize=False, to='django_tasks_database.dbtaskresult')),
                ('organization_id', models.BigIntegerField(db_index=True)),
            ],
        ),
    ]
