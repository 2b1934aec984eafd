from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InboundConfig(AppConfig):
    """What WhatsApp's webhook brings in: messages, statuses, echoes and history, and the
    account's news, parsed and handed to the services that record them."""

    name = "inbound"
    verbose_name = _("WhatsApp webhook")

    def ready(self):
        from inbound.tasks import after_acceptance
        from sending.recorded import MessagesOut, listen

        # The sandbox's accepted messages get WhatsApp's statuses (inbound/tasks.py).
        listen(MessagesOut, after_acceptance)
