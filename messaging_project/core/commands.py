"""What every app's management commands share: a service's refusal as a clean CommandError."""

from contextlib import contextmanager

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.management.base import CommandError


@contextmanager
def command_errors():
    """A missing record or a refused write is one line on stderr, not a traceback."""
    try:
        yield
    except ObjectDoesNotExist as error:
        raise CommandError(str(error)) from None
    except ValidationError as error:
        raise CommandError(" ".join(error.messages)) from None
