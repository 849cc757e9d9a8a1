"""Sections of ``tauk report`` kept apart from its layout (:mod:`tauk.report`): each returns the tables, the
reasons for what it could not write and the Markdown it adds to the report's index.

- :mod:`tauk.report_sections.validity` — task validity: the audit of the definitions the runs were graded with
  (do-nothing bound, components that pass by themselves) and pass^k on the substantive tasks beside pass^k on all.
"""

from tauk.report_sections.validity import (
    ReportSection,
    definitions_table,
    substantive_table,
    validity_section,
)

__all__ = ["ReportSection", "definitions_table", "substantive_table", "validity_section"]
