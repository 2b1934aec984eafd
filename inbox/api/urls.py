from inbox.api.views import ConversationViewSet
from messaging_project.api.routers import ApiRouter

router = ApiRouter()
router.register("conversations", ConversationViewSet, basename="conversation")

urlpatterns = router.urls
