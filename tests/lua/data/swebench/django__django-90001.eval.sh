#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff 0513635e9adeef0115bae5c1b7ecc375b9cb5b5a
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -e .
git checkout 0513635e9adeef0115bae5c1b7ecc375b9cb5b5a tests/shapes/tests.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/shapes/tests.py b/tests/shapes/tests.py
index 63635e9..65c9552 100644
--- a/tests/shapes/tests.py
+++ b/tests/shapes/tests.py
@@ -1,3 +1,5 @@
+import math
+
 from django.test import SimpleTestCase
 
 import geometry
@@ -6,3 +8,17 @@ import geometry
 class AreaTests(SimpleTestCase):
     def test_square(self):
         self.assertEqual(geometry.square(3), 9)
+
+    def test_circle(self):
+        """Circles have an area of pi r squared."""
+        self.assertAlmostEqual(geometry.circle(2), 4 * math.pi)
+
+    def test_rectangle(self):
+        self.assertEqual(geometry.rectangle(2, 5), 10)
+
+    def test_noisy(self):
+        print("a line the test prints")
+        self.assertEqual(geometry.square(0), 0)
+
+    def test_skipped(self):
+        self.skipTest("not on this platform")

EOF_114329324912
: '>>>>> Start Test Output'
./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 shapes.tests
: '>>>>> End Test Output'
git checkout 0513635e9adeef0115bae5c1b7ecc375b9cb5b5a tests/shapes/tests.py
