#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 replacer_test.go
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/replacer_test.go b/replacer_test.go
index 3f2a1b0..9c8d7e6 100644
--- a/replacer_test.go
+++ b/replacer_test.go
@@ -1,3 +1,3 @@
 func TestX(t *testing.T) {
-	old()
+	new()
 }

EOF_114329324912
: '>>>>> Start Test Output'
go test -v . -run "TestReplacerNew*"
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 replacer_test.go
