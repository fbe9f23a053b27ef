#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 tests/Factory/FactoryTest.php
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/tests/Factory/FactoryTest.php b/tests/Factory/FactoryTest.php
index 3f2a1b0..9c8d7e6 100644
--- a/tests/Factory/FactoryTest.php
+++ b/tests/Factory/FactoryTest.php
@@ -1,3 +1,3 @@
     public function testX() {
-        $a = 1;
+        $a = 2;
     }

EOF_114329324912
composer update
composer install
: '>>>>> Start Test Output'
vendor/bin/phpunit --testdox --colors=never tests/Factory/FactoryTest.php
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 tests/Factory/FactoryTest.php
