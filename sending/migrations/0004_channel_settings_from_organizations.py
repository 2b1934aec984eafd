"""Every organization's channel settings, copied from its old columns to a Channel row.

Every organization gets a row, sandbox organizations included (a sandbox may have webhook
secrets), so no value is lost. Organizations created later have no row until their
channel is configured, and use the sandbox. Backwards, the rows' values go back into the
organization's columns (accounts.0006 restores them first, empty).
"""

from django.db import migrations

FIELDS = (
    "phone_number_id",
    "business_account_id",
    "access_token",
    "app_secret",
    "verify_token",
)


def to_channel_rows(apps, schema_editor):
    Organization = apps.get_model("accounts", "Organization")
    Channel = apps.get_model("sending", "Channel")
    rows = (
        Channel(
            organization_id=organization.pk,
            kind=organization.channel,
            **{field: getattr(organization, field) for field in FIELDS},
        )
        for organization in Organization.objects.order_by("pk").iterator(chunk_size=1000)
    )
    Channel.objects.bulk_create(rows, batch_size=1000)


def to_organization_columns(apps, schema_editor):
    Organization = apps.get_model("accounts", "Organization")
    Channel = apps.get_model("sending", "Channel")
    for channel in Channel.objects.order_by("pk").iterator(chunk_size=1000):
        Organization.objects.filter(pk=channel.organization_id).update(
            channel=channel.kind, **{field: getattr(channel, field) for field in FIELDS}
        )


class Migration(migrations.Migration):

    dependencies = [
        ('sending', '0003_channel'),
    ]

    operations = [
        migrations.RunPython(to_channel_rows, to_organization_columns),
    ]
