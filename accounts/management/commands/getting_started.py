from django.core.management.base import BaseCommand

from accounts.models import Organization


class Command(BaseCommand):
    help = "Print how to get an API token and make a first call (make run shows this)."

    def add_arguments(self, parser):
        parser.add_argument("--port", default="8000")

    def handle(self, *args, port, **options):
        base = f"http://127.0.0.1:{port}"
        organizations = Organization.objects.count()
        self.stdout.write(
            f"\nServing on {base} ({organizations} organization(s)). To get a token:\n"
            "  .venv/bin/python manage.py create_organization 'My Business'\n"
            "  .venv/bin/python manage.py issue_token 'My Business'\n"
            "Then, with TOKEN set to the last line printed:\n"
            f'  curl -H "Authorization: Bearer $TOKEN" {base}/api/contacts\n'
            "See README.md for more.\n"
        )
