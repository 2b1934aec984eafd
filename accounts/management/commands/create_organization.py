from django.core.management.base import BaseCommand

from accounts import services
from messaging_project.core.commands import command_errors


class Command(BaseCommand):
    help = "Create an organization (a tenant). Prints its uuid as the last line."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--rate-limit", type=int, help="requests per minute for its tokens")

    def handle(self, *args, name, rate_limit, **options):
        with command_errors():
            organization = services.create_organization(name=name, rate_limit=rate_limit)
        self.stderr.write(f"Created organization {organization.name!r}.")
        self.stdout.write(str(organization.uuid))
