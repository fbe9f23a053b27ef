"""ratlib: exact means (a sympy-style repo for rock's tests)."""
from sympy import Integer


def mean(values):
    return Integer(sum(values)) // len(values)
