"""Who may do what in the admin: the one place roles are read (docs/inbox.md, "Roles").

Superusers may do everything. A staff member is a manager or an agent by their
membership's `role`; staff without a membership are neither.
"""

from typing import cast

from accounts.models import Membership, Role


def staff_role(user) -> str | None:
    """The user's role, read once per user object; None for staff without a membership."""
    cached = getattr(user, "_staff_role", False)
    if cached is not False:
        return cast(str | None, cached)  # what this function or remember_role stored
    role = None
    if user.is_active and user.is_staff:
        role = Membership.objects.filter(user_id=user.pk).values_list("role", flat=True).first()
    user._staff_role = role
    return role


def remember_role(user, role: str | None) -> None:
    """Keep a role read with the membership for another purpose (the admin's scoping
    reads the membership on every page): staff_role then needs no query."""
    user._staff_role = role if user.is_active and user.is_staff else None


def is_manager(user) -> bool:
    """Superusers and managers: the operators' and settings' pages are theirs."""
    if not user.is_active:
        return False
    return bool(user.is_superuser or staff_role(user) == Role.MANAGER)


def is_agent(user) -> bool:
    return not user.is_superuser and staff_role(user) == Role.AGENT
