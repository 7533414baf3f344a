"""Recorded sessions: Claude Code logs and our journals loaded, replayed call by call, priced (economics),
checked (request validity, coverage) and followed while they are written (watch)."""
