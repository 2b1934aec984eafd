from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InboundConfig(AppConfig):
    """What WhatsApp's webhook brings in: messages, statuses, echoes and history, and the
    account's news, parsed and handed to the services that record them."""

    name = "inbound"
    verbose_name = _("WhatsApp webhook")

    def ready(self):
        from inbound.queued_statuses import StatusQueue
        from inbound.tasks import after_acceptance
        from messaging_project.worker.queues import register_queue
        from sending.recorded import MessagesOut, listen

        # The workers apply the statuses the webhook queued (WHATSAPP_STATUSES_QUEUED).
        register_queue(StatusQueue())

        # The sandbox's accepted messages get WhatsApp's statuses (inbound/tasks.py).
        listen(MessagesOut, after_acceptance)
