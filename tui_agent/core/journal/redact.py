"""The journal's redaction is the one in `core/redact.py` (moved to the ground floor, so the loop, trace
lines and every face use it too); these names stay importable from here."""

from tui_agent.core.redact import (  # noqa: F401
    CUT_PIECE,
    MIN_SECRET,
    REDACTED,
    SECRET_NAME,
    Secrets,
    known_secrets,
    redact,
    redact_record,
    redact_text,
    secret_values,
)
