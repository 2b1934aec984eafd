from django.urls import re_path

from business_numbers.api.views import ChannelView, MessageTemplateViewSet, NumberViewSet
from messaging_project.api.routers import ApiRouter

router = ApiRouter()
router.register("numbers", NumberViewSet, basename="number")
router.register("templates", MessageTemplateViewSet, basename="template")

urlpatterns = [
    re_path(r"^channel/?$", ChannelView.as_view(), name="channel"),
    *router.urls,
]
