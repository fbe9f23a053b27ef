#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
echo "No test files to reset"
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/tests/basics/string_format_modulo_int.py b/tests/basics/string_format_modulo_int.py
new file mode 100644
index 0000000..5d1e2f3
--- /dev/null
+++ b/tests/basics/string_format_modulo_int.py
@@ -0,0 +1,1 @@
+print('%d' % 1)
diff --git a/tests/basics/string_format_modulo_int.py.exp b/tests/basics/string_format_modulo_int.py.exp
new file mode 100644
index 0000000..5d1e2f3
--- /dev/null
+++ b/tests/basics/string_format_modulo_int.py.exp
@@ -0,0 +1,1 @@
+1

EOF_114329324912
source ./tools/ci.sh
ci_unix_build_helper VARIANT=standard
gcc -shared -o tests/ports/unix/ffi_lib.so tests/ports/unix/ffi_lib.c
: '>>>>> Start Test Output'
cd tests
MICROPY_CPYTHON3=python3 MICROPY_MICROPYTHON=../ports/unix/build-standard/micropython ./run-tests.py -i string_format
: '>>>>> End Test Output'
echo "No test files to reset"
