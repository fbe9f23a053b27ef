#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff a542c462398e0a8f3ab8eab596ef4a1645869349
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -e .
git checkout a542c462398e0a8f3ab8eab596ef4a1645869349 ratlib/tests/test_mean.py
git apply -v - <<'EOF_114329324912'
diff --git a/ratlib/tests/test_mean.py b/ratlib/tests/test_mean.py
index f5fcdf1..c7d0ecb 100644
--- a/ratlib/tests/test_mean.py
+++ b/ratlib/tests/test_mean.py
@@ -1,5 +1,22 @@
+from sympy import Rational
+from sympy.testing.pytest import raises
+
 from ratlib import mean
 
 
 def test_mean_ints():
     assert mean([2, 4]) == 3
+
+
+def test_mean_fraction():
+    assert mean([1, 2]) == Rational(3, 2)
+
+
+def test_mean_empty():
+    raises(ValueError, lambda: mean([]))
+
+
+def test_mean_zz_last():
+    # the runner ends its file's last line with [OK] / [FAIL]: no status
+    # SWE-bench's parser can read there, so this one is in no list
+    assert mean([5]) == 5

EOF_114329324912
: '>>>>> Start Test Output'
PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose ratlib/tests/test_mean.py
: '>>>>> End Test Output'
git checkout a542c462398e0a8f3ab8eab596ef4a1645869349 ratlib/tests/test_mean.py
