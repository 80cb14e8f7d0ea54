"""The parts a report page is built of: a section and its tables. Apart from
:mod:`analysis.report` so that every part that makes a section (the skill ladder's among them)
can import them without importing the report that gathers the sections.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

LONG_TABLE = 16                 # rows beyond which a table is folded away (the CSV has it all)


@dataclass
class Table:
    name: str                      # CSV file name (without .csv): every column, internal codes
    df: pd.DataFrame
    shown: pd.DataFrame            # what the page shows: human columns, estimates with ranges
    caption: str = ""
    folded: bool | None = None     # None: folded when longer than LONG_TABLE rows

    @property
    def is_folded(self) -> bool:
        return len(self.shown) > LONG_TABLE if self.folded is None else self.folded


@dataclass
class Section:
    title: str
    note: str
    tables: list = field(default_factory=list)
    figures: list = field(default_factory=list)    # (title, file stem, draw function)
    notice: str = ""                               # said first, in a box (a finding held back)
