#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 test/format-test.cc
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/test/format-test.cc b/test/format-test.cc
index 3f2a1b0..9c8d7e6 100644
--- a/test/format-test.cc
+++ b/test/format-test.cc
@@ -1,3 +1,3 @@
 TEST(format_test, x) {
-  a();
+  b();
 }

EOF_114329324912
mkdir -p build
cmake -B build -S .
cmake --build build --parallel $(nproc) --target format-test
: '>>>>> Start Test Output'
ctest --test-dir build -V -R format-test
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 test/format-test.cc
