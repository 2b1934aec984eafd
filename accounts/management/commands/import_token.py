from django.core.management.base import BaseCommand

from accounts import services
from accounts.commands import organization_argument
from messaging_project.core.commands import command_errors


class Command(BaseCommand):
    help = (
        "Keep an API token the original product issued, for an organization (uuid or exact "
        "name): its clients go on with it, changing only the base URL. Only its digest is "
        "stored."
    )

    def add_arguments(self, parser):
        parser.add_argument("organization")
        parser.add_argument("token", help="the token as the original product shows it")
        parser.add_argument("--name", default="", help="a label to recognise the token by")

    def handle(self, *args, organization, token, name, **options):
        with command_errors():
            record = services.import_token(
                organization=organization_argument(organization), token=token, name=name
            )
        self.stdout.write(f"Imported token {record.prefix} for {record.organization.name!r}.")
