from canned_replies.api.views import CannedReplyViewSet
from messaging_project.api.routers import ApiRouter

router = ApiRouter()
router.register("canned-replies", CannedReplyViewSet, basename="canned-reply")

urlpatterns = router.urls
