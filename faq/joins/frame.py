"""The relation form the executor works on: variable columns plus one value column.

Examples
--------
>>> from faq.joins.frame import Frame, VALUE_COLUMN
>>> VALUE_COLUMN
'__v'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# The value column of every frame. Query variables may not start with "__",
# so it never collides with a variable column.
VALUE_COLUMN = "__v"


@dataclass(frozen=True)
class Frame:
    """A DataFrame whose columns are ``variables`` (named as query variables) and :data:`VALUE_COLUMN`."""

    df: "DataFrame"
    variables: tuple[str, ...]
