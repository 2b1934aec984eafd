from django.urls import re_path

from messaging_project.api.routers import ApiRouter
from sending.api.views import (
    ChatViewSet,
    SendMediaView,
    SendMessageView,
    SendTemplateView,
)

router = ApiRouter()
router.register("chats", ChatViewSet, basename="chat")

urlpatterns = [
    re_path(r"^send/?$", SendMessageView.as_view(), name="send"),
    re_path(r"^send/template/?$", SendTemplateView.as_view(), name="send-template"),
    re_path(r"^send/media/?$", SendMediaView.as_view(), name="send-media"),
    *router.urls,
]
