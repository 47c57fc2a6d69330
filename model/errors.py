"""Re-export of the one input-error type (defined in the lowest package)."""

from hardware.errors import InputError

__all__ = ["InputError"]
