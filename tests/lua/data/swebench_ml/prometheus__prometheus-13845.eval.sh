#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 promql/engine_test.go model/labels/labels_test.go
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/promql/engine_test.go b/promql/engine_test.go
index 3f2a1b0..9c8d7e6 100644
--- a/promql/engine_test.go
+++ b/promql/engine_test.go
@@ -1,3 +1,3 @@
 func TestRangeQuery(t *testing.T) {
-	x := 1
+	x := 2
 }
diff --git a/model/labels/labels_test.go b/model/labels/labels_test.go
index 3f2a1b0..9c8d7e6 100644
--- a/model/labels/labels_test.go
+++ b/model/labels/labels_test.go
@@ -1,3 +1,3 @@
 func TestLabels(t *testing.T) {
-	a()
+	b()
 }

EOF_114329324912
: '>>>>> Start Test Output'
go test -v ./promql ./model/labels -run "^(TestRangeQuery|TestLabels)"
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 promql/engine_test.go model/labels/labels_test.go
