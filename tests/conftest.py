"""Suite-wide settings.

Hypothesis: in CI (the `CI` environment variable is set) the property tests run a fixed,
derandomized set of examples, so a green commit stays green; locally they explore new
examples on every run and keep failures in `.hypothesis/`.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
