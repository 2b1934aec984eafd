from django.core.management.base import BaseCommand, CommandError

from accounts.commands import organization_argument
from business_numbers import services
from business_numbers.gateway import ChannelNotConfigured, FailureKind, GatewayError
from business_numbers.models import Number
from business_numbers.selectors import find_number


class Command(BaseCommand):
    help = (
        "Copy the message templates of an organization's number (its default number unless "
        "--number names another) from its WhatsApp business account."
    )

    def add_arguments(self, parser):
        parser.add_argument("organization", help="uuid or exact name")
        parser.add_argument("--number", help="the number's uuid, phone number id or display number")

    def handle(self, *args, organization, number=None, **options):
        record = organization_argument(organization)
        found = find_number(record, number) if number else Number.objects.default_for(record)
        if found is None:
            raise CommandError(f"{record.name!r} has no number {number!r}.")
        try:
            result = services.sync_templates(number=found)
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
