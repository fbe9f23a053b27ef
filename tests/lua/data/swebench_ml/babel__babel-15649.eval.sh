#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 packages/babel-traverse/test/scope.js
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/packages/babel-traverse/test/scope.js b/packages/babel-traverse/test/scope.js
index 3f2a1b0..9c8d7e6 100644
--- a/packages/babel-traverse/test/scope.js
+++ b/packages/babel-traverse/test/scope.js
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }
diff --git a/packages/babel-traverse/test/fixtures/scope/options.json b/packages/babel-traverse/test/fixtures/scope/options.json
new file mode 100644
index 0000000..5d1e2f3
--- /dev/null
+++ b/packages/babel-traverse/test/fixtures/scope/options.json
@@ -0,0 +1,1 @@
+{"a": 1}

EOF_114329324912
make build
: '>>>>> Start Test Output'
yarn jest packages/babel-traverse/test/scope.js --verbose
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 packages/babel-traverse/test/scope.js
