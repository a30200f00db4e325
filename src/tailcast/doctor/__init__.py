"""`tailcast doctor`: what this machine has for tailcast, and what each missing part turns
off. Checks import what they probe only when they run (the CLI must start fast)."""

from tailcast.doctor.probe import Check, Status
from tailcast.doctor.runner import DoctorReport, run_checks

__all__ = ["Check", "DoctorReport", "Status", "run_checks"]
