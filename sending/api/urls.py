from django.urls import re_path

from messaging_project.api.routers import ApiRouter
from sending.api.views import (
    ChatViewSet,
    SendContactsView,
    SendInteractiveView,
    SendLocationView,
    SendMediaView,
    SendMessageView,
    SendReactionView,
    SendTemplateView,
)

router = ApiRouter()
router.register("chats", ChatViewSet, basename="chat")

urlpatterns = [
    re_path(r"^send/?$", SendMessageView.as_view(), name="send"),
    re_path(r"^send/template/?$", SendTemplateView.as_view(), name="send-template"),
    re_path(r"^send/media/?$", SendMediaView.as_view(), name="send-media"),
    re_path(r"^send/interactive/?$", SendInteractiveView.as_view(), name="send-interactive"),
    re_path(r"^send/reaction/?$", SendReactionView.as_view(), name="send-reaction"),
    re_path(r"^send/location/?$", SendLocationView.as_view(), name="send-location"),
    re_path(r"^send/contacts/?$", SendContactsView.as_view(), name="send-contacts"),
    *router.urls,
]
