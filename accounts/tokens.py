"""The token format: `wam_<prefix>_<secret>`.

The prefix is public (it is how `list_tokens` and `revoke_token` name a token and how
a request finds its row); the secret is 32 random bytes. Only SHA-256 of the whole
token is stored: the token has enough entropy that a slow hash adds nothing.
"""

import hashlib
import hmac
import re
import secrets

TOKEN_PATTERN = re.compile(r"^wam_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")


def new_token() -> tuple[str, str, str]:
    """A fresh (token, prefix, digest)."""
    prefix = secrets.token_hex(6)
    token = f"wam_{prefix}_{secrets.token_urlsafe(32)}"
    return token, prefix, digest_of(token)


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def prefix_of(token: str) -> str | None:
    match = TOKEN_PATTERN.match(token)
    return match.group(1) if match else None


def digest_matches(token: str, digest: str) -> bool:
    return hmac.compare_digest(digest_of(token), digest)
