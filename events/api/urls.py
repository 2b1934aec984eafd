from events.api.views import EndpointViewSet
from messaging_project.api.routers import ApiRouter

router = ApiRouter()
router.register("webhooks", EndpointViewSet, basename="event-webhook")

urlpatterns = router.urls
