#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 tests/jq.test
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/tests/jq.test b/tests/jq.test
index 3f2a1b0..9c8d7e6 100644
--- a/tests/jq.test
+++ b/tests/jq.test
@@ -1,3 +1,3 @@
 .
-1
+2
 null

EOF_114329324912
git submodule update --init
autoreconf -fi
./configure --with-oniguruma=builtin
make clean
touch src/parser.y src/lexer.l
make -j$(nproc)
: '>>>>> Start Test Output'
make check
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 tests/jq.test
