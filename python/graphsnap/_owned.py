"""Closing of library handles, written once: ``close()`` also through
``with`` and on garbage collection (_Closing); and, for handles opened from
a Database (samplers, temporal samplers, event streams), freeing the handle
and leaving the database's list of children (_Owned)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # the annotation only: database.py imports this module
    from .database import Database


class _Closing:
    """close() on leaving a ``with`` block and on garbage collection (where
    an error is dropped: the interpreter may be shutting down)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class _Owned(_Closing):
    """A library handle opened from a Database: close() frees it (and leaves
    the database's list of children), also through ``with`` and on garbage
    collection. Subclasses set ``_free`` to the library's close function."""
    _free = None
    _h: Optional[int] = None
    db: Database

    def close(self) -> None:
        if self._h is not None:
            type(self)._free(self._h)
            self._h = None
            if self in self.db._children:
                self.db._children.remove(self)
