"""For the management commands of every app: the organization a command is given."""

from accounts import services
from messaging_project.core.commands import command_errors


def organization_argument(reference: str):
    """The organization by uuid or exact name; a CommandError when there is none."""
    with command_errors():
        return services.find_organization(reference)
