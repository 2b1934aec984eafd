import django_filters

from messaging_project.api.filters import StableOrderingFilter
from sending.models import Chat, ChatStatus, ChatType


class ChatFilter(django_filters.FilterSet):
    contact = django_filters.UUIDFilter(field_name="contact__uuid")
    status = django_filters.ChoiceFilter(choices=ChatStatus.choices)
    type = django_filters.ChoiceFilter(choices=ChatType.choices)
    ordering = StableOrderingFilter(fields=["id", "created_at", "status"])

    class Meta:
        model = Chat
        fields: list[str] = []
