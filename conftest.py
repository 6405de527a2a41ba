"""Test-wide settings: notebooks executed by the tests use the small ``ci`` sizes
unless told otherwise."""

import os

os.environ.setdefault("GPUBOOK_PROFILE", "ci")
