"""The admin's permissions for staff members.

A staff member manages every record of their organization's apps (STAFF_APPS), and the
admin's tenancy (admin_scoping.py) narrows what they see to that organization. The
permissions are granted here, when they are checked, rather than stored per user when
the user is created: a staff user created before an app existed (events and campaigns
came after the first staff users) gets its permissions without a data migration.
"""

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Permission
from django.db.models import Exists, Q

from accounts.models import Membership
from accounts.services import STAFF_APPS


class StaffMemberBackend(ModelBackend):
    def _get_user_permissions(self, user_obj):
        # One query, as ModelBackend's own: the user's permissions, and with a membership
        # every permission of the staff apps.
        granted = Q(user=user_obj)
        if user_obj.is_staff:
            member = Exists(Membership.objects.filter(user=user_obj))
            granted |= Q(member, content_type__app_label__in=STAFF_APPS)
        return Permission.objects.filter(granted)
