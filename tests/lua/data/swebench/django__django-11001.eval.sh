#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen
export LANG=en_US.UTF-8
export LANGUAGE=en_US:en
export LC_ALL=en_US.UTF-8
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -e .
git checkout aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa tests/migrations/test_optimizer.py tests/fixtures/data.json
git apply -v - <<'EOF_114329324912'
diff --git a/tests/migrations/test_optimizer.py b/tests/migrations/test_optimizer.py
index 1111111..2222222 100644
--- a/tests/migrations/test_optimizer.py
+++ b/tests/migrations/test_optimizer.py
@@ -1,3 +1,4 @@
 import x
+import y
 a
 b
diff --git a/tests/migrations/test_new_file.py b/tests/migrations/test_new_file.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/tests/migrations/test_new_file.py
@@ -0,0 +1,2 @@
+def test():
+    pass
diff --git a/tests/fixtures/data.json b/tests/fixtures/data.json
index 4444444..5555555 100644
--- a/tests/fixtures/data.json
+++ b/tests/fixtures/data.json
@@ -1 +1 @@
-{}
+{"a": 1}

EOF_114329324912
: '>>>>> Start Test Output'
./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 migrations.test_optimizer migrations.test_new_file
: '>>>>> End Test Output'
git checkout aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa tests/migrations/test_optimizer.py tests/fixtures/data.json
