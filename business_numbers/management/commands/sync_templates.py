from django.core.management.base import BaseCommand, CommandError

from accounts.commands import organization_argument
from business_numbers.gateway import ChannelNotConfigured, FailureKind, GatewayError
from sending import services


class Command(BaseCommand):
    help = "Copy an organization's message templates from its WhatsApp business account."

    def add_arguments(self, parser):
        parser.add_argument("organization", help="uuid or exact name")

    def handle(self, *args, organization, **options):
        record = organization_argument(organization)
        try:
            result = services.sync_templates(organization=record)
        except ChannelNotConfigured as error:
            raise CommandError(error.detail) from None
        except GatewayError as error:
            hint = ""
            if error.kind == FailureKind.CREDENTIALS:
                hint = "; the channel credentials need attention (configure_channel)"
            raise CommandError(
                f"The WhatsApp channel refused the template list: {error.message} "
                f"(code {error.code}, fbtrace_id {error.fbtrace_id}){hint}."
            ) from None
        self.stdout.write(
            f"Templates of {record.name!r}: {result.created} new, {result.updated} updated, "
            f"{result.removed} removed."
        )
