#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 spec/rubocop/cop/lint/out_of_range_regexp_ref_spec.rb
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/spec/rubocop/cop/lint/out_of_range_regexp_ref_spec.rb b/spec/rubocop/cop/lint/out_of_range_regexp_ref_spec.rb
index 3f2a1b0..9c8d7e6 100644
--- a/spec/rubocop/cop/lint/out_of_range_regexp_ref_spec.rb
+++ b/spec/rubocop/cop/lint/out_of_range_regexp_ref_spec.rb
@@ -1,3 +1,3 @@
 RSpec.describe X do
-  it 'a'
+  it 'b'
 end
diff --git a/changelog/fix_x.md b/changelog/fix_x.md
new file mode 100644
index 0000000..5d1e2f3
--- /dev/null
+++ b/changelog/fix_x.md
@@ -0,0 +1,1 @@
+* fix

EOF_114329324912
: '>>>>> Start Test Output'
bundle exec rspec spec/rubocop/cop/lint/out_of_range_regexp_ref_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end'
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 spec/rubocop/cop/lint/out_of_range_regexp_ref_spec.rb
