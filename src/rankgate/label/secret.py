"""Keeping the API key out of logs, files, errors and reprs: `rankgate.retrieve.secret`, shared with `retrieve`."""

from rankgate.retrieve.secret import REDACTED, Secret, display_url, secret_from_env

__all__ = ["REDACTED", "Secret", "display_url", "secret_from_env"]
