#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
echo "No test files to reset"
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/test/transform/resource/before/SuperBuilderJavadoc.java b/test/transform/resource/before/SuperBuilderJavadoc.java
new file mode 100644
index 0000000..5d1e2f3
--- /dev/null
+++ b/test/transform/resource/before/SuperBuilderJavadoc.java
@@ -0,0 +1,1 @@
+class A {}
diff --git a/test/transform/resource/after-delombok/SuperBuilderJavadoc.java b/test/transform/resource/after-delombok/SuperBuilderJavadoc.java
new file mode 100644
index 0000000..5d1e2f3
--- /dev/null
+++ b/test/transform/resource/after-delombok/SuperBuilderJavadoc.java
@@ -0,0 +1,1 @@
+class A {}

EOF_114329324912
ant test.compile
: '>>>>> Start Test Output'
ant test.instance
: '>>>>> End Test Output'
echo "No test files to reset"
