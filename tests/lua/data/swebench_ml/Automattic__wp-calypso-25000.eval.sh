#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 client/lib/a/test/index.js server/bundler/test/x.js
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/client/lib/a/test/index.js b/client/lib/b/test/index.js
similarity index 90%
rename from client/lib/a/test/index.js
rename to client/lib/b/test/index.js
index 1a2b3c4..4c3b2a1 100644
--- a/client/lib/a/test/index.js
+++ b/client/lib/b/test/index.js
@@ -1,3 +1,3 @@
 describe('x', () => {
-  it('a');
+  it('b');
 });
diff --git a/server/bundler/test/x.js b/server/bundler/test/x.js
index 3f2a1b0..9c8d7e6 100644
--- a/server/bundler/test/x.js
+++ b/server/bundler/test/x.js
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }

EOF_114329324912
: '>>>>> Start Test Output'
./node_modules/.bin/jest --verbose -c=test/client/jest.config.json 'client/lib/b/test/index.js'
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 client/lib/a/test/index.js server/bundler/test/x.js
