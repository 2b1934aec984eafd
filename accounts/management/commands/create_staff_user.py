from django.core.management.base import BaseCommand

from accounts import services
from accounts.commands import organization_argument
from messaging_project.core.commands import command_errors


class Command(BaseCommand):
    help = "Create a staff user who manages one organization's records in the admin."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--organization", required=True, help="uuid or exact name")
        parser.add_argument("--password", required=True)

    def handle(self, *args, username, organization, password, **options):
        org = organization_argument(organization)
        with command_errors():
            user = services.create_staff_user(
                username=username, organization=org, password=password
            )
        self.stdout.write(f"Created staff user {user.username!r} for {org.name!r}.")
