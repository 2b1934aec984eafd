from django.core.management.base import BaseCommand, CommandError

from accounts.commands import organization_argument
from business_numbers import services
from messaging_project.core.commands import command_errors


class Command(BaseCommand):
    help = (
        "Connect an organization (uuid or exact name) to the WhatsApp Cloud API, "
        "or put it back on the sandbox. See docs/channel.md."
    )

    def add_arguments(self, parser):
        parser.add_argument("organization")
        parser.add_argument("--sandbox", action="store_true", help="send through the sandbox")
        parser.add_argument("--phone-number-id", help="the Cloud API phone number id")
        parser.add_argument("--access-token", help="a permanent (system user) access token")
        parser.add_argument("--business-account-id", help="the WhatsApp business account id")
        parser.add_argument("--app-secret", help="the Meta app's secret (signs webhooks)")
        parser.add_argument("--verify-token", help="the webhook subscription's verify token")

    def handle(self, *args, organization, sandbox, **options):
        credentials = {
            name: options[name]
            for name in (
                "phone_number_id",
                "access_token",
                "business_account_id",
                "app_secret",
                "verify_token",
            )
        }
        if not sandbox and not (credentials["phone_number_id"] or credentials["access_token"]):
            raise CommandError("Give either --sandbox or --phone-number-id and --access-token.")
        record = organization_argument(organization)
        with command_errors():
            channel = services.configure_channel(
                organization=record, sandbox=sandbox, **credentials
            )
        if sandbox:
            self.stdout.write(f"{record.name!r} now sends through the sandbox.")
            return
        # The secrets are not echoed: terminals and CI logs are kept.
        account = channel.business_account_id
        extra = f", business account id {account}" if account else ""
        self.stdout.write(
            f"{record.name!r} now sends through the WhatsApp Cloud API "
            f"(phone number id {channel.phone_number_id}{extra})."
        )
        missing = [
            label
            for label, value in (
                ("--business-account-id (for sync_templates)", channel.business_account_id),
                ("--app-secret (for webhooks)", channel.app_secret),
                ("--verify-token (for webhooks)", channel.verify_token),
            )
            if not value
        ]
        if missing:
            self.stderr.write("Not set yet: " + ", ".join(missing) + ".")
