#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff cccccccccccccccccccccccccccccccccccccccc
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -e .
git checkout cccccccccccccccccccccccccccccccccccccccc sympy/core/tests/test_numbers.py sympy/printing/tests/test_latex.py doc/src/notes.csv
git apply -v - <<'EOF_114329324912'
diff --git a/sympy/core/tests/test_numbers.py b/sympy/core/tests/test_numbers.py
--- a/sympy/core/tests/test_numbers.py
+++ b/sympy/core/tests/test_numbers.py
@@ -10,6 +10,9 @@ def test_a():
     pass
 
 
+def test_b():
+    assert 1
+
 def test_c():
     pass
 
diff --git a/sympy/printing/tests/test_latex.py b/sympy/printing/tests/test_latex.py
--- a/sympy/printing/tests/test_latex.py
+++ b/sympy/printing/tests/test_latex.py
@@ -1,2 +1,2 @@
-x
+y
 z
diff --git a/doc/src/notes.csv b/doc/src/notes.csv
--- a/doc/src/notes.csv
+++ b/doc/src/notes.csv
@@ -1 +1 @@
-a
+b

EOF_114329324912
: '>>>>> Start Test Output'
PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose sympy/core/tests/test_numbers.py sympy/printing/tests/test_latex.py
: '>>>>> End Test Output'
git checkout cccccccccccccccccccccccccccccccccccccccc sympy/core/tests/test_numbers.py sympy/printing/tests/test_latex.py doc/src/notes.csv
