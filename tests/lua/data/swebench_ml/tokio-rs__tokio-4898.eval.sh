#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 tokio/tests/rt_metrics.rs
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/tokio/tests/rt_metrics.rs b/tokio/tests/rt_metrics.rs
index 3f2a1b0..9c8d7e6 100644
--- a/tokio/tests/rt_metrics.rs
+++ b/tokio/tests/rt_metrics.rs
@@ -1,3 +1,3 @@
 fn t() {
-    old();
+    new();
 }

EOF_114329324912
: '>>>>> Start Test Output'
RUSTFLAGS="--cfg tokio_unstable" cargo test --features full --test rt_metrics
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 tokio/tests/rt_metrics.rs
