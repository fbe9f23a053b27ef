#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 test/specs/scale.linear.tests.js
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/test/specs/scale.linear.tests.js b/test/specs/scale.linear.tests.js
index 3f2a1b0..9c8d7e6 100644
--- a/test/specs/scale.linear.tests.js
+++ b/test/specs/scale.linear.tests.js
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }
diff --git a/test/fixtures/scale.linear/grace.json b/test/fixtures/scale.linear/grace.json
new file mode 100644
index 0000000..5d1e2f3
--- /dev/null
+++ b/test/fixtures/scale.linear/grace.json
@@ -0,0 +1,1 @@
+{}

EOF_114329324912
: '>>>>> Start Test Output'
pnpm install
pnpm run build
xvfb-run --server-args="-screen 0 1280x1024x24 -ac :99" su chromeuser -c "./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.cjs --single-run --coverage --grep --auto-watch false"
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 test/specs/scale.linear.tests.js
