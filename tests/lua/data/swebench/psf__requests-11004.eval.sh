#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff dddddddddddddddddddddddddddddddddddddddd
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install .
git checkout dddddddddddddddddddddddddddddddddddddddd tests/test_requests.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_requests.py b/tests/test_requests.py
--- a/tests/test_requests.py
+++ b/tests/test_requests.py
@@ -1,1 +1,2 @@
 import requests
+# a line that says diff --git a/x b/y

EOF_114329324912
: '>>>>> Start Test Output'
pytest -rA tests/test_requests.py y
: '>>>>> End Test Output'
git checkout dddddddddddddddddddddddddddddddddddddddd tests/test_requests.py
