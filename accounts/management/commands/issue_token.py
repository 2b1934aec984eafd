from django.core.management.base import BaseCommand

from accounts import services
from accounts.commands import organization_argument


class Command(BaseCommand):
    help = "Issue an API token for an organization (uuid or exact name). Prints the token last."

    def add_arguments(self, parser):
        parser.add_argument("organization")
        parser.add_argument("--name", default="", help="a label to recognise the token by")

    def handle(self, *args, organization, name, **options):
        issued = services.issue_token(organization=organization_argument(organization), name=name)
        self.stderr.write(
            f"Token {issued.record.prefix} for {issued.record.organization.name!r}. "
            "It is shown once; store it now."
        )
        self.stdout.write(issued.token)
