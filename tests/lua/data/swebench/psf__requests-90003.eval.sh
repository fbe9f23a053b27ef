#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff c732dd3666727339139a6c5f250d78d02f08754b
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install .
git checkout c732dd3666727339139a6c5f250d78d02f08754b tests/test_io.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_io.py b/tests/test_io.py
index 821e5dd..da643e9 100644
--- a/tests/test_io.py
+++ b/tests/test_io.py
@@ -1,5 +1,12 @@
+import pytest
+
 import iolib
 
 
 def test_join_two():
     assert iolib.join("a", "b") == "a-b"
+
+
+@pytest.mark.parametrize("parts", [("alpha", "beta", "gamma-delta")])
+def test_join_many(parts):
+    assert iolib.join(*parts) == "alpha-beta-gamma-delta"
diff --git a/tests/test_paths.py b/tests/test_paths.py
new file mode 100644
index 0000000..74b9f3e
--- /dev/null
+++ b/tests/test_paths.py
@@ -0,0 +1,13 @@
+import pytest
+
+import iolib
+
+
+@pytest.mark.parametrize("path", ["/srv/data/input.txt", "/var/tmp/archive.tar.gz"])
+def test_stem(path):
+    assert iolib.stem(path) == path.rsplit("/", 1)[-1].split(".")[0]
+
+
+@pytest.mark.parametrize("path", ["/srv/data/.hidden"])
+def test_stem_hidden(path):
+    assert iolib.stem(path) == ".hidden"

EOF_114329324912
: '>>>>> Start Test Output'
pytest -rA tests/test_io.py tests/test_paths.py
: '>>>>> End Test Output'
git checkout c732dd3666727339139a6c5f250d78d02f08754b tests/test_io.py
