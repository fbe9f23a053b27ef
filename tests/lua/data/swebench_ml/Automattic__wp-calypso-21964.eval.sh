#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 client/blocks/login/test/index.js packages/calypso-build/test/webpack.js test/e2e/specs/login.js README.md
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/client/blocks/login/test/index.js b/client/blocks/login/test/index.js
index 3f2a1b0..9c8d7e6 100644
--- a/client/blocks/login/test/index.js
+++ b/client/blocks/login/test/index.js
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }
diff --git a/client/blocks/login/test/__snapshots__/index.js.snap b/client/blocks/login/test/__snapshots__/index.js.snap
new file mode 100644
index 0000000..5d1e2f3
--- /dev/null
+++ b/client/blocks/login/test/__snapshots__/index.js.snap
@@ -0,0 +1,1 @@
+exports[`x`] = `y`;
diff --git a/packages/calypso-build/test/webpack.js b/packages/calypso-build/test/webpack.js
index 3f2a1b0..9c8d7e6 100644
--- a/packages/calypso-build/test/webpack.js
+++ b/packages/calypso-build/test/webpack.js
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }
diff --git a/test/e2e/specs/login.js b/test/e2e/specs/login.js
index 3f2a1b0..9c8d7e6 100644
--- a/test/e2e/specs/login.js
+++ b/test/e2e/specs/login.js
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }
diff --git a/README.md b/README.md
index 3f2a1b0..9c8d7e6 100644
--- a/README.md
+++ b/README.md
@@ -1,3 +1,3 @@
 # a
-old
+new
 b

EOF_114329324912
: '>>>>> Start Test Output'
./node_modules/.bin/jest --verbose -c=test/client/jest.config.js 'client/blocks/login/test/index.js'
./node_modules/.bin/jest --verbose -c=test/client/jest.config.js 'client/blocks/login/test'
./node_modules/.bin/jest --verbose -c=test/packages/jest.config.js 'packages/calypso-build/test/webpack.js'
cd test/e2e
NODE_CONFIG_ENV=test npm run test test/e2e/specs/login.js
cd ../..
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 client/blocks/login/test/index.js packages/calypso-build/test/webpack.js test/e2e/specs/login.js README.md
