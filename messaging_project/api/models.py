"""The API layer's own records. The organization is named by string: this layer imports
no app, accounts sits above it."""

from django.db import models


class IdempotencyKey(models.Model):
    """The first outcome of a request sent with an `Idempotency-Key`, kept for replay.

    The row is claimed (inserted) before the request runs, so a concurrent retry finds
    it and gets a 409 instead of running twice; the unique constraint is what makes
    that safe across workers.
    """

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path and body.")
    completed = models.BooleanField(default=False)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "key"], name="unique_idempotency_key")
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_key_age")]

    def __str__(self) -> str:
        return self.key
