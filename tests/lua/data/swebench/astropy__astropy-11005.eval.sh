#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -e .[test] --verbose
git checkout eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee astropy/io/fits/tests/test_header.py
git apply -v - <<'EOF_114329324912'
diff --git a/astropy/io/fits/tests/test_header.py b/astropy/io/fits/tests/test_header.py
--- a/astropy/io/fits/tests/test_header.py
+++ b/astropy/io/fits/tests/test_header.py
@@ -1 +1 @@
-a
+b

EOF_114329324912
: '>>>>> Start Test Output'
pytest -rA astropy/io/fits/tests/test_header.py
: '>>>>> End Test Output'
git checkout eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee astropy/io/fits/tests/test_header.py
