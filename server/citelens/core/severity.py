"""How serious a finding is: :class:`Severity`, its one order (:attr:`Severity.rank`) and the
values a severity setting takes (a severity, or :data:`OFF`). Every list of severities is
derived from the enum (the codes' defaults, ``--severity``, ``--fail-on``, the reports'
counts, the VS Code manifest), so the names are written here once."""

from __future__ import annotations

from enum import Enum


class Severity(str, Enum):
    """Most serious first."""

    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"

    @property
    def rank(self) -> int:
        """How serious: hint 0, information 1, warning 2, error 3."""
        return _ORDER.index(self)


#: Least serious first: the one order of severities.
_ORDER: tuple[Severity, ...] = tuple(reversed(Severity))
#: A severity setting that turns a code off.
OFF = "off"
#: What a severity setting may say (``diagnosticSeverity``, ``--severity CODE=LEVEL``).
SETTING_VALUES: tuple[str, ...] = (*(s.value for s in Severity), OFF)
