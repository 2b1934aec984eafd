from canned_replies import services
from canned_replies.api.filters import CannedReplyFilter
from canned_replies.api.serializers import CannedReplyInputSerializer
from canned_replies.models import CannedReply
from canned_replies.representations import canned_reply_data
from messaging_project.api.idempotency import idempotent
from messaging_project.api.viewsets import OrganizationViewSet, write_result


class CannedReplyViewSet(OrganizationViewSet):
    queryset = CannedReply.objects.live()
    filterset_class = CannedReplyFilter
    input_serializer_class = CannedReplyInputSerializer
    represent = staticmethod(canned_reply_data)

    @idempotent
    def create(self, request):
        reply = services.create_canned_reply(
            organization=self.organization, **self.validated_input()
        )
        return write_result(reply)

    def update(self, request, uuid=None):
        reply = self.get_object()
        services.update_canned_reply(reply=reply, changes=self.validated_input(partial=True))
        return write_result(reply)

    partial_update = update

    def destroy(self, request, uuid=None):
        reply = self.get_object()
        services.delete_canned_reply(reply=reply)
        return write_result(reply)
