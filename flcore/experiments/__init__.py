"""Paper presets, scales and (later) the artifact registry."""
from .presets import DEFAULT_DATASET, method_defaults, scale_defaults

__all__ = ["DEFAULT_DATASET", "method_defaults", "scale_defaults"]
