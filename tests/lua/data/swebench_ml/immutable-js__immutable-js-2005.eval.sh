#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 __tests__/OrderedMap.ts __tests__/OrderedSet.ts
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/__tests__/OrderedMap.ts b/__tests__/OrderedMap.ts
index 3f2a1b0..9c8d7e6 100644
--- a/__tests__/OrderedMap.ts
+++ b/__tests__/OrderedMap.ts
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }
diff --git a/__tests__/OrderedSet.ts b/__tests__/OrderedSet.ts
index 3f2a1b0..9c8d7e6 100644
--- a/__tests__/OrderedSet.ts
+++ b/__tests__/OrderedSet.ts
@@ -1,3 +1,3 @@
 function t() {
-  old();
+  new();
 }

EOF_114329324912
npm run build
: '>>>>> Start Test Output'
npx jest __tests__/OrderedMap.ts __tests__/OrderedSet.ts --silent --json | jq -r '.testResults[].assertionResults[] | "[" + (.status | ascii_upcase) + "] " + ((.ancestorTitles | join(" > ")) + (if .ancestorTitles | length > 0 then " > " else "" end) + .title)'
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 __tests__/OrderedMap.ts __tests__/OrderedSet.ts
