#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 test/plugin_helper/test_http_server_helper.rb
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/test/plugin_helper/test_http_server_helper.rb b/test/plugin_helper/test_http_server_helper.rb
index 3f2a1b0..9c8d7e6 100644
--- a/test/plugin_helper/test_http_server_helper.rb
+++ b/test/plugin_helper/test_http_server_helper.rb
@@ -1,3 +1,3 @@
   test 'mount' do
-    a
+    b
   end

EOF_114329324912
: '>>>>> Start Test Output'
bundle exec ruby test/plugin_helper/test_http_server_helper.rb -v -n '/mount/'
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 test/plugin_helper/test_http_server_helper.rb
