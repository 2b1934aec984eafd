"""WSGI entry point for gunicorn."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "messaging_project.settings")

from django.core.wsgi import get_wsgi_application  # noqa: E402

from messaging_project.core.encryption import verify_stored_secrets  # noqa: E402

application = get_wsgi_application()

# Keys that cannot decrypt the stored secrets stop the web process here, saying so, rather
# than answering 500 to every request that needs a secret.
verify_stored_secrets()
