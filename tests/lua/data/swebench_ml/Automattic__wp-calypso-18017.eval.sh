#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 client/state/posts/test/reducer.js client/state/posts/test/old.js
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/client/state/posts/test/reducer.js b/client/state/posts/test/reducer.js
index 3f2a1b0..9c8d7e6 100644
--- a/client/state/posts/test/reducer.js
+++ b/client/state/posts/test/reducer.js
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }
diff --git a/client/state/posts/test/old.js b/client/state/posts/test/old.js
deleted file mode 100644
index 7a6b5c4..0000000
--- a/client/state/posts/test/old.js
+++ /dev/null
@@ -1,2 +0,0 @@
-gone
-too

EOF_114329324912
: '>>>>> Start Test Output'
npm run test-client --verbose 'client/state/posts/test/reducer.js'
npm run test-client --verbose 'client/state/posts/test/old.js'
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 client/state/posts/test/reducer.js client/state/posts/test/old.js
