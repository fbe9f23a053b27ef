import pytest

from pager import page_count, paginate


@pytest.mark.parametrize("total,per_page,expected", [(0, 5, 1), (10, 5, 2), (1, 1, 1)])
def test_page_count_exact(total, per_page, expected):
    assert page_count(total, per_page) == expected


def test_first_page():
    assert paginate(list(range(10)), 1, 3) == [0, 1, 2]


def test_bad_per_page():
    with pytest.raises(ValueError):
        page_count(3, 0)


@pytest.mark.skip(reason="cursor paging is not written yet")
def test_cursor_paging():
    raise NotImplementedError


@pytest.mark.xfail(reason="negative pages counting from the end", strict=True)
def test_negative_page():
    assert paginate([1, 2, 3], -1, 1) == [3]
