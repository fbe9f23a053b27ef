-- expected.lua: what each real runner's log (logs/<tool>.log, made by
-- make-log from the tiny projects here) parses to, with the parser
-- SWE-bench uses for that runner. SWE-bench's own parsers give the same
-- maps on these logs; the gaps are theirs (a should_panic test, minitest
-- names without ". ", a TAP "# SKIP" counted as passed, jest's --json
-- "pending").
local P, F, S = "PASSED", "FAILED", "SKIPPED"
return {
  go = { family = "go", parser = "parse_log_gotest", map = {
    TestAdd = P, TestSub = F, TestSkip = S, TestTable = F, ["TestTable/one_case"] = P,
    ["TestTable/two/deep"] = F, TestPanic = F } },
  cargo = { family = "rust", parser = "parse_log_cargo", map = {
    ["tests::adds"] = P, ["tests::subtracts"] = F, regression_r1 = P, regression_r2 = F } },
  maven = { family = "java", parser = "parse_log_maven", map = {
    ["calc.CalcTest#testAdd"] = P, ["calc.CalcTest#testError"] = F } },
  phpunit = { family = "php", parser = "parse_log_phpunit", map = {
    ["Calc > Adds numbers"] = P, ["Calc > Subtracts numbers"] = F, ["Calc > Skipped"] = S,
    ["Calc > Errors"] = F, ['Calc > Pairs with data set "same"'] = P,
    ['Calc > Pairs with data set "differ"'] = F } },
  minitest = { family = "ruby", parser = "parse_log_minitest", map = {
    ["TestCalc#test_: static files should be read"] = P } },
  ["test-unit"] = { family = "ruby", parser = "parse_log_ruby_unit", map = {
    ["password with special chars"] = P, test_adds = P, test_errors = F, test_omits = S,
    test_subtracts = F } },
  rspec = { family = "ruby", parser = "parse_log_rspec_transformed_json", map = {
    adds = P, subtracts = F, raises = F } },
  googletest = { family = "c", parser = "parse_log_googletest", map = {
    ["FormatTest.Adds"] = P, ["FormatTest.Subtracts"] = F, ["FormatTest.Throws"] = F,
    ["Range/Sized.IsSmall/0"] = P, ["Range/Sized.IsSmall/1, where GetParam() = 3"] = F } },
  doctest = { family = "c", parser = "parse_log_doctest", map = {
    ["udt <conversions> & more > adds"] = P, ["udt <conversions> & more > subtracts"] = F,
    ["udt <conversions> & more > outer"] = P, ["udt <conversions> & more > inner"] = P } },
  jest = { family = "js", parser = "parse_log_jest", map = {
    adds = P, subtracts = F, ["slow one"] = P, ["skipped waits"] = S, throws = F } },
  ["jest-json"] = { family = "js", parser = "parse_log_jest_json", map = {
    ["calc > adds"] = P, ["calc > subtracts"] = F, ["calc > slow one"] = P,
    ["calc > nested > throws"] = F } },
  vitest = { family = "js", parser = "parse_log_vitest", map = {
    ["calc.test.js > calc > adds"] = P, ["calc.test.js > calc > subtracts"] = F,
    ["calc.test.js > calc > waits"] = S, ["calc.test.js > calc > nested > throws"] = F } },
  mocha = { family = "js_multimodal", parser = "parse_log_highlightjs", map = {
    ["calc.adds"] = P, ["calc.subtracts"] = F, ["nested.throws"] = F } },
  tap = { family = "js", parser = "parse_log_tap", map = {
    ["- adds"] = P, ["- subtracts"] = F, ["- waits # SKIP"] = P } },
}
