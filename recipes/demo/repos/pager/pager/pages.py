"""Split a list into pages (1-based page numbers)."""


def page_count(total, per_page):
    """The number of pages total items fill, per_page on each (at least 1)."""
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    return max(1, total // per_page)


def paginate(items, page, per_page):
    """The items on page (1-based) when per_page are shown on each."""
    if page < 1 or page > page_count(len(items), per_page):
        raise IndexError(f"page {page} out of range")
    start = (page - 1) * per_page
    return items[start:start + per_page]
