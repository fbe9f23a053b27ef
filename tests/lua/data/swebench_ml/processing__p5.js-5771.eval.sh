#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 test/unit/core/rendering.js
mkdir -p test/unit/assets
curl -o test/unit/assets/cat.png https://example.com/cat.png
chmod 777 test/unit/assets/cat.png
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/test/unit/core/rendering.js b/test/unit/core/rendering.js
index 3f2a1b0..9c8d7e6 100644
--- a/test/unit/core/rendering.js
+++ b/test/unit/core/rendering.js
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }

EOF_114329324912
: '>>>>> Start Test Output'
sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 test/unit/core/rendering.js
