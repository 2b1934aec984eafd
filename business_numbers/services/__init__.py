"""The numbers' services: every write of the app, for the API, the admin, the commands
and the apps above. Another app imports them from here, never from the modules behind.

- `numbers`: an organization's numbers (`create_number`, `update_number`,
  `delete_number`) and the default number's settings (`configure_channel`,
  `set_service_window`);
- `media`: files staff send, put on a number's channel (`upload_media`);
- `templates`: the templates synced from a number's business account, and a template
  send's checks and text;
- `template_writing`: templates written here and submitted to WhatsApp
  (`create_template`, `update_template`, `delete_template`, `template_errors`).
"""

from business_numbers.services.media import Uploaded, upload_media
from business_numbers.services.numbers import (
    NumberConflict,
    configure_channel,
    create_number,
    delete_number,
    guard_deletion,
    save_channel,
    set_service_window,
    update_number,
)
from business_numbers.services.template_writing import (
    TemplateExists,
    create_template,
    delete_template,
    template_errors,
    update_template,
)
from business_numbers.services.templates import (
    SyncResult,
    TemplateNotApproved,
    check_approved,
    check_parameter_count,
    check_template,
    placeholders,
    rendered_metadata,
    sync_templates,
    synced_template,
)

__all__ = [
    "NumberConflict",
    "SyncResult",
    "TemplateExists",
    "TemplateNotApproved",
    "Uploaded",
    "check_approved",
    "check_parameter_count",
    "check_template",
    "configure_channel",
    "create_number",
    "create_template",
    "delete_number",
    "delete_template",
    "guard_deletion",
    "placeholders",
    "rendered_metadata",
    "save_channel",
    "set_service_window",
    "sync_templates",
    "template_errors",
    "synced_template",
    "update_number",
    "update_template",
    "upload_media",
]
