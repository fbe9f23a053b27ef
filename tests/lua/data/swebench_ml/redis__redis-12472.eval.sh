#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 tests/unit/old.tcl
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/tests/unit/acl-v2.tcl b/tests/unit/acl-v2.tcl
new file mode 100644
index 0000000..5d1e2f3
--- /dev/null
+++ b/tests/unit/acl-v2.tcl
@@ -0,0 +1,1 @@
+test {x} {}
diff --git a/tests/unit/old.tcl b/tests/unit/old.tcl
deleted file mode 100644
index 7a6b5c4..0000000
--- a/tests/unit/old.tcl
+++ /dev/null
@@ -1,2 +0,0 @@
-gone
-too

EOF_114329324912
make distclean
make
: '>>>>> Start Test Output'
TERM=dumb ./runtest --durable --single unit/acl --only "/.*ACL GETUSER.*"
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 tests/unit/old.tcl
