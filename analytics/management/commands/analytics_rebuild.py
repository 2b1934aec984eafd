"""Recompute the analytics rollup from the chats; report and repair what differs."""

from django.core.management.base import BaseCommand, CommandError

from analytics.folding import fold
from analytics.rebuild import compare_with_chats, repair


class Command(BaseCommand):
    help = (
        "Recompute the daily message figures from the chats and their statuses, compare "
        "them with the ones kept live, and repair the days that differ (--check: only "
        "report, and fail when any differ)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Report differences without repairing."
        )

    def handle(self, *args, check: bool = False, **options):
        fold()  # the rollup as folded as it gets: what waits is counted beside it
        comparison = compare_with_chats()
        differences = comparison.differences
        for name in ("messages", "billable", "staff"):
            for key in getattr(differences, name):
                self.stdout.write(f"{name} differ: {' '.join(str(part) for part in key)}")
        if not differences:
            self.stdout.write("The figures match the chats.")
            return
        if check:
            raise CommandError("The figures differ from the chats (run without --check to repair).")
        repair(comparison)
        self.stdout.write("Repaired.")
