#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 packages/compiler-sfc/__tests__/compileStyle.spec.ts
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/packages/compiler-sfc/__tests__/compileStyle.spec.ts b/packages/compiler-sfc/__tests__/compileStyle.spec.ts
index 3f2a1b0..9c8d7e6 100644
--- a/packages/compiler-sfc/__tests__/compileStyle.spec.ts
+++ b/packages/compiler-sfc/__tests__/compileStyle.spec.ts
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }

EOF_114329324912
pnpm run build compiler-sfc
: '>>>>> Start Test Output'
pnpm run test packages/compiler-sfc/__tests__/compileStyle.spec.ts --no-watch --reporter=verbose
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 packages/compiler-sfc/__tests__/compileStyle.spec.ts
