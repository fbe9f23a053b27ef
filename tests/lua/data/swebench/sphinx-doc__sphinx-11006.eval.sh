#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff ffffffffffffffffffffffffffffffffffffffff
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -e .[test]
git checkout ffffffffffffffffffffffffffffffffffffffff tests/test_ext_autodoc.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_ext_autodoc.py b/tests/test_ext_autodoc.py
--- a/tests/test_ext_autodoc.py
+++ b/tests/test_ext_autodoc.py
@@ -1 +1 @@
-a
+b
diff --git a/tests/roots/test-ext-autodoc/target/x.py b/tests/roots/test-ext-autodoc/target/x.py
new file mode 100644
--- /dev/null
+++ b/tests/roots/test-ext-autodoc/target/x.py
@@ -0,0 +1 @@
+X = 1

EOF_114329324912
: '>>>>> Start Test Output'
tox --current-env -epy39 -v -- tests/test_ext_autodoc.py tests/roots/test-ext-autodoc/target/x.py
: '>>>>> End Test Output'
git checkout ffffffffffffffffffffffffffffffffffffffff tests/test_ext_autodoc.py
