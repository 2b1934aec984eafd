from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('events', '0003_delivery_fewer_indexes'),
    ]

    operations = [
        migrations.CreateModel(
            name='Emission',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('endpoints', models.CharField(max_length=255)),
                ('event', models.CharField(choices=[('message.received', 'Message Received'), ('message.sent', 'Message Sent'), ('message.status.update', 'Message Status Update'), ('contact.created', 'Contact Created'), ('contact.updated', 'Contact Updated'), ('contact.deleted', 'Contact Deleted'), ('group.created', 'Group Created'), ('group.updated', 'Group Updated'), ('group.deleted', 'Group Deleted'), ('autoreply.created', 'Autoreply Created'), ('autoreply.updated', 'Autoreply Updated'), ('autoreply.deleted', 'Autoreply Deleted')], max_length=32)),
                ('body', models.TextField()),
                ('created_at', models.DateTimeField()),
            ],
            options={
                'ordering': ['id'],
            },
        ),
    ]
