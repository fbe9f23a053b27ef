#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 crates/nu-command/tests/commands/find.rs
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/crates/nu-command/tests/commands/find.rs b/crates/nu-command/tests/commands/find.rs
index 3f2a1b0..9c8d7e6 100644
--- a/crates/nu-command/tests/commands/find.rs
+++ b/crates/nu-command/tests/commands/find.rs
@@ -1,3 +1,3 @@
 fn find() {
-    a();
+    b();
 }

EOF_114329324912
cargo build
: '>>>>> Start Test Output'
cargo test -p nu-command --no-fail-fast --test main find::
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 crates/nu-command/tests/commands/find.rs
