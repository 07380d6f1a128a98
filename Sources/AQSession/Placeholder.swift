// The session module: see docs/session-format.md.
