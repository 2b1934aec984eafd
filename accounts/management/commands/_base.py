"""What the accounts commands share: turning service errors into clean command errors."""

from contextlib import contextmanager

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from accounts import services


@contextmanager
def command_errors():
    try:
        yield
    except services.NotFound as error:
        raise CommandError(str(error)) from None
    except ValidationError as error:
        raise CommandError(" ".join(error.messages)) from None


def organization_argument(reference: str):
    with command_errors():
        return services.find_organization(reference)
