import django_filters

from messaging_project.api.filters import StableOrderingFilter
from sending.models import Chat, ChatStatus, ChatType, MessageTemplate


class ChatFilter(django_filters.FilterSet):
    contact = django_filters.UUIDFilter(field_name="contact__uuid")
    status = django_filters.ChoiceFilter(choices=ChatStatus.choices)
    type = django_filters.ChoiceFilter(choices=ChatType.choices)
    ordering = StableOrderingFilter(fields=["id", "created_at", "status"])

    class Meta:
        model = Chat
        fields = []


class MessageTemplateFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", max_length=512)
    language = django_filters.CharFilter(max_length=16)
    status = django_filters.CharFilter(lookup_expr="iexact", max_length=32)
    ordering = StableOrderingFilter(fields=["id", "name", "language", "updated_at"])

    class Meta:
        model = MessageTemplate
        fields = []
