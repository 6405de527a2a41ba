"""Device choice and size profiles: the one place where a chapter's problem sizes are
chosen.

A *profile* names how big the examples are:

``gpu``
    the full sizes of the published run (a data-centre GPU such as an H100);
``cpu``
    sizes that finish in minutes on a laptop without a GPU;
``ci``
    tiny sizes so that continuous integration executes every notebook quickly.

The profile comes from the environment variable ``GPUBOOK_PROFILE``. When it is not set,
it is ``ci`` under continuous integration (the variable ``CI`` is set to a true value),
``gpu`` when PyTorch sees a CUDA device and ``cpu`` otherwise.
"""

from __future__ import annotations

import os
from typing import TypeVar

import torch

PROFILES = ("gpu", "cpu", "ci")
"""The known profile names, from largest to smallest problem sizes."""

PROFILE_VARIABLE = "GPUBOOK_PROFILE"

T = TypeVar("T")


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no", "off")


def get_profile() -> str:
    """Return the active profile name: one of :data:`PROFILES`.

    Raises :class:`ValueError` when ``GPUBOOK_PROFILE`` names an unknown profile.
    """
    name = os.environ.get(PROFILE_VARIABLE, "").strip().lower()
    if name:
        if name not in PROFILES:
            raise ValueError(
                f"{PROFILE_VARIABLE}={name!r} is not a known profile; "
                f"expected one of {PROFILES}"
            )
        return name
    if _truthy(os.environ.get("CI")):
        return "ci"
    return "gpu" if torch.cuda.is_available() else "cpu"


def pick_device() -> torch.device:
    """The device the chapters compute on: the first CUDA GPU when there is one, else
    the CPU."""
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def sizes(*, gpu: T, cpu: T, ci: T, profile: str | None = None) -> T:
    """Pick the value for the active profile (or for ``profile`` when given).

    Example: ``n = sizes(gpu=10_000, cpu=2_000, ci=256)`` gives a matrix size that suits
    the machine. Values may be of any type: a number, a list of sizes, a dict of
    settings.
    """
    profile = get_profile() if profile is None else profile
    if profile not in PROFILES:
        raise ValueError(
            f"profile={profile!r} is not a known profile; expected one of {PROFILES}"
        )
    return {"gpu": gpu, "cpu": cpu, "ci": ci}[profile]


def synchronize(device: torch.device | str | None = None) -> None:
    """Wait until all work queued on ``device`` has finished (a no-op on the CPU)."""
    device = torch.device(device) if device is not None else pick_device()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
