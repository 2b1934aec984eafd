from django.core.management.base import BaseCommand, CommandError

from accounts import services
from messaging_project.core.commands import command_errors


class Command(BaseCommand):
    help = "Revoke an API token, given whole or by the prefix list_tokens shows."

    def add_arguments(self, parser):
        parser.add_argument("token_or_prefix")

    def handle(self, *args, token_or_prefix, **options):
        with command_errors():
            token = services.find_token(token_or_prefix)
        if not token.is_active:
            raise CommandError(f"Token {token.prefix} is already revoked.")
        services.revoke_token(token=token)
        self.stdout.write(f"Revoked token {token.prefix} of {token.organization.name!r}.")
