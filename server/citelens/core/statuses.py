"""What a verdict says of an entry, as one enum every layer compares by member: the verdict
(``verify/status.Verification``), its class (``verify/classes.py``), the findings' data a quick
fix reads back (``core/findings.FixData``) and the reports. A status is never compared as the
string it is written as (``tests/test_architecture.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class Status(StrEnum):
    VERIFIED = "VERIFIED"  # title, authors and year agree with a real paper
    PARTIAL = "PARTIAL"  # the same paper, but some fields disagree
    DOI_MISMATCH = "DOI_MISMATCH"  # the entry's identifier names a different paper
    NOT_FOUND = "NOT_FOUND"  # every source consulted answered, none has it
    UNVERIFIED = "UNVERIFIED"  # no decision possible (a source failed, offline, no title)

    @classmethod
    def named(cls, value: object) -> Status | None:
        """The status ``value`` writes (a JSON field, any case), or None."""
        return cls.__members__.get(value.upper()) if isinstance(value, str) else None


#: The verdicts a progress line counts, in this order, and how it names them (the
#: editor's ``$/progress`` and ``citelens check``'s log lines).
PROGRESS_LABELS: tuple[tuple[Status, str], ...] = (
    (Status.NOT_FOUND, "not found"),
    (Status.DOI_MISMATCH, "wrong identifier"),
    (Status.PARTIAL, "with discrepancies"),
    (Status.UNVERIFIED, "unverified"),
)


def progress_counts(by_status: Mapping[Status, int]) -> list[str]:
    """``["3 not found", "1 unverified"]``: the verdicts reached so far that a progress line
    names (``by_status``: count by status), in :data:`PROGRESS_LABELS` order."""
    return [f"{by_status[s]} {label}" for s, label in PROGRESS_LABELS if by_status.get(s)]
