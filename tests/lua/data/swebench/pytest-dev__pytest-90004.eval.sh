#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff 8899bdf0a977b5b6a34c5ce9352533134a1001d6
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -e .
git checkout 8899bdf0a977b5b6a34c5ce9352533134a1001d6 testing/test_words.py
git apply -v - <<'EOF_114329324912'
diff --git a/testing/test_words.py b/testing/test_words.py
index 89f240a..409d2f5 100644
--- a/testing/test_words.py
+++ b/testing/test_words.py
@@ -1,5 +1,27 @@
+import sys
+
+import pytest
+
 import wordlib
 
 
 def test_one_word():
     assert wordlib.count("hello") == 1
+
+
+def test_many_spaces():
+    assert wordlib.count("a  b   c") == 3
+
+
+def test_empty():
+    assert wordlib.count("") == 0
+
+
+@pytest.mark.xfail(reason="tabs are not spaces yet", strict=True)
+def test_tabs():
+    assert wordlib.count("a\tb") == 2
+
+
+@pytest.mark.skipif(sys.platform != "nonesuch", reason="only on nonesuch")
+def test_platform():
+    assert False

EOF_114329324912
: '>>>>> Start Test Output'
pytest -rA testing/test_words.py
: '>>>>> End Test Output'
git checkout 8899bdf0a977b5b6a34c5ce9352533134a1001d6 testing/test_words.py
