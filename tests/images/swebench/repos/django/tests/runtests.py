#!/usr/bin/env python
"""Run the tests with Django's own test runner, as Django's runtests.py does:
labels are dotted module paths under tests/ (shapes.tests)."""
import argparse
import os
import sys

import django
from django.conf import settings
from django.test.utils import get_runner

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

parser = argparse.ArgumentParser()
parser.add_argument("modules", nargs="*")
parser.add_argument("-v", "--verbosity", type=int, default=1)
parser.add_argument("--settings")
parser.add_argument("--parallel", default="0")
args = parser.parse_args()
os.environ["DJANGO_SETTINGS_MODULE"] = args.settings or "test_sqlite"
django.setup()
runner = get_runner(settings)(verbosity=args.verbosity, parallel=int(args.parallel))
failures = runner.run_tests(args.modules or ["shapes"])
sys.exit(bool(failures))
