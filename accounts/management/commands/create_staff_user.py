from django.core.management.base import BaseCommand

from accounts import services
from accounts.commands import organization_argument
from accounts.models import Role
from messaging_project.core.commands import command_errors


class Command(BaseCommand):
    help = "Create a staff user who manages one organization's records in the admin."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--organization", required=True, help="uuid or exact name")
        parser.add_argument("--password", required=True)
        parser.add_argument(
            "--role",
            choices=Role.values,
            default=Role.MANAGER,
            help="manager (the default) or agent",
        )

    def handle(self, *args, username, organization, password, role, **options):
        org = organization_argument(organization)
        with command_errors():
            user = services.create_staff_user(
                username=username, organization=org, password=password, role=role
            )
        self.stdout.write(f"Created staff user {user.username!r} ({role}) for {org.name!r}.")
