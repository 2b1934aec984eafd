from django.core.management.base import BaseCommand

from accounts.commands import organization_argument
from accounts.models import ApiToken


def moment(value) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "never"


class Command(BaseCommand):
    help = "List API tokens (prefix, name, created, last used); never their secrets."

    def add_arguments(self, parser):
        parser.add_argument("organization", nargs="?", help="uuid or exact name")

    def handle(self, *args, organization, **options):
        tokens = ApiToken.objects.select_related("organization")
        if organization:
            tokens = tokens.filter(organization=organization_argument(organization))
        columns = "{:<16} {:<24} {:<24} {:<19} {:<19} {}"
        self.stdout.write(
            columns.format("PREFIX", "NAME", "ORGANIZATION", "CREATED", "LAST USED", "STATUS")
        )
        for token in tokens:
            self.stdout.write(
                columns.format(
                    token.prefix,
                    token.name[:24],
                    token.organization.name[:24],
                    moment(token.created_at),
                    moment(token.last_used_at),
                    "active" if token.is_active else f"revoked {moment(token.revoked_at)}",
                )
            )
