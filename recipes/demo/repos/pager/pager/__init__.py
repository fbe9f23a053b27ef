"""pager: split lists into pages."""
from .pages import page_count, paginate

__all__ = ["page_count", "paginate"]
