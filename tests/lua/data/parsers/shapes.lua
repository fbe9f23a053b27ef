-- shapes.lua: logs in the shapes SWE-bench's own parser tests
-- (tests/test_log_parsers_*.py) and its specs' runners print, for the
-- parsers whose runner does not run here (gradle, ant, cucumber, redis's
-- Tcl runner, automake, micropython, karma in a browser, the Multimodal
-- repos' suites), with what each parser makes of them. Each entry:
-- { parser, log, want[, task] }.
local P, F, S = "PASSED", "FAILED", "SKIPPED"
local E = "\27"
return {
  -- java (SWE-bench's test_log_parsers_java.py)
  { "parse_log_gradle_custom", "com.example.Test > testOne PASSED\ncom.example.Test > testTwo FAILED\n",
    { ["com.example.Test > testOne"] = P, ["com.example.Test > testTwo"] = F } },
  { "parse_log_gradle_custom", "> Task :test\nWARNING: Some warning\ncom.example.Test > testMethod PASSED\nBUILD SUCCESSFUL\n",
    { ["com.example.Test > testMethod"] = P } },
  { "parse_log_gradle_custom", "com.example.Test > testOne PASSED\ncom.example.Test > testTwo\nWARNING: interleaved output\nPASSED\ncom.example.Test > testThree\nFAILED\n",
    { ["com.example.Test > testOne"] = P, ["com.example.Test > testTwo"] = P, ["com.example.Test > testThree"] = F } },
  { "parse_log_maven", "+ mvnd test -B -Dtest=com.example.Test#testOne\n[INFO] BUILD SUCCESS\n+ mvnd test -B -Dtest=com.example.Test#testTwo\n[INFO] BUILD FAILURE\n",
    { ["com.example.Test#testOne"] = P, ["com.example.Test#testTwo"] = F } },
  { "parse_log_maven", "+ mvnd test -B -Dtest=com.example.Test#testOne\n+ mvnd test -B -Dtest=com.example.Test#testTwo\n[INFO] BUILD SUCCESS\n[INFO] BUILD SUCCESS\n+ mvnd test -B -Dtest=com.example.Test#testThree\n[INFO] BUILD FAILURE\n",
    { ["com.example.Test#testOne"] = P, ["com.example.Test#testTwo"] = P, ["com.example.Test#testThree"] = F } },
  { "parse_log_maven", "+ mvnd test -B -Dtest=com.example.Test#testOne\n[INFO] BUILD SUCCESS\n+ mvnd test -B -Dtest=com.example.Test#testTwo\n+ : '>>>>> End Test Output'\n+ git checkout somefile.java\n[INFO] BUILD SUCCESS\n",
    { ["com.example.Test#testOne"] = P, ["com.example.Test#testTwo"] = P } },
  { "parse_log_maven", "[INFO] BUILD SUCCESS\n+ mvn test -Dtest=A#late\n", { ["A#late"] = P } },
  { "parse_log_ant", "    [junit] [PASS] lombok.TestJavac.testA\n    [junit] [FAIL] lombok.TestJavac.testB\n    [junit] [ERR] lombok.TestEcj.testC\n    [junit] Tests run: 3",
    { ["lombok.TestJavac.testA"] = P, ["lombok.TestJavac.testB"] = F, ["lombok.TestEcj.testC"] = F } },
  -- js (SWE-bench's test_log_parsers_javascript.py, then the runners' shapes)
  { "parse_log_jest", "✓ adds two numbers (2 ms)\n✕ subtracts two numbers\n○ skipped test\n",
    { ["adds two numbers"] = P, ["subtracts two numbers"] = F, ["skipped test"] = S } },
  { "parse_log_jest", "✓ builds the correct query (105 ms)", { ["builds the correct query"] = P } },
  { "parse_log_jest", "    ✓ works when nested (3 ms)", { ["works when nested"] = P } },
  { "parse_log_karma", table.concat({
    "START:", "01 12 2026 10:00:00.000:INFO [launcher]: Starting browser ChromeHeadless",
    "  render()", "    ✔ should render", "    ✖ should fail", "    nested", "      ✔ deep", "  hooks",
    "    ✔ useState", "Finished in 0.1 secs / 0.05 secs @ 10:00:01 GMT", "SUMMARY:", "✔ 3 tests completed",
    "✖ 1 test failed" }, "\n"),
    { ["render() > should render"] = P, ["render() > should fail"] = F, ["render() > nested > deep"] = P,
      ["render() > useState"] = P } }, -- a shallower line closes one suite and opens none
  { "parse_log_immutable_js", "✓ a (1 ms)\n[PASSED] b\n", { a = P }, { instance_id = "immutable-js__immutable-js-2006" } },
  { "parse_log_immutable_js", "✓ a (1 ms)\n[PASSED] b\n", { b = P }, { instance_id = "immutable-js__immutable-js-2005" } },
  { "parse_log_immutable_js", "✓ a (1 ms)\n", {}, { instance_id = "immutable-js__immutable-js-1" } },
  -- ruby
  { "parse_log_cucumber", "Feature: x\n  Scenario: serves the site ......\n  Scenario: builds drafts ...F\n",
    { ["Scenario: serves the site"] = P, ["Scenario: builds drafts"] = F } },
  { "parse_log_jekyll", "TestSite#test_: static files should be read. = 0.01 s = .\n", { ["TestSite#test_: static files should be read"] = P },
    { instance_id = "jekyll__jekyll-9141" } },
  { "parse_log_jekyll", "Scenario: a ...F\n", { ["Scenario: a"] = F }, { instance_id = "jekyll__jekyll-8761" } },
  { "parse_log_jekyll", "Scenario: a ...F\n", {}, { instance_id = "jekyll__jekyll-1" } },
  { "parse_log_rspec_transformed_json", "zips a folder - ./fastlane/spec/zip_spec.rb[1:1] - passed\nuses a password - ./fastlane/spec/zip_spec.rb[1:2] - failed\n",
    { ["zips a folder - ./fastlane/spec/zip_spec.rb[1:1]"] = P, ["uses a password - ./fastlane/spec/zip_spec.rb[1:2]"] = F } },
  -- c
  { "parse_log_redis", "[ok]: BZMPOP with illegal argument (2 ms)\n[err]: BZMPOP readraw in RESP3 in tests/unit/type/zset.tcl\n[skip]: needs debug\n[ignore]: large memory\n[ok]: no timing\n",
    { ["BZMPOP with illegal argument"] = P, ["BZMPOP readraw in RESP3"] = F, ["needs debug"] = S,
      ["large memory"] = S, ["no timing"] = P } },
  { "parse_log_jq", "PASS: tests/optionaltest\nFAIL: tests/jqtest\n# TOTAL: 2\n", { ["tests/optionaltest"] = P, ["tests/jqtest"] = F } },
  { "parse_log_micropython_test", "pass  basics/fun1.py\nFAIL  basics/fun2.py\nskip  thread/x.py\n3 tests performed\n",
    { ["basics/fun1.py"] = P, ["basics/fun2.py"] = F, ["thread/x.py"] = S } },
  -- SWE-bench Multimodal's js repos
  { "parse_log_calypso", "+ yarn ./node_modules/.bin/jest client/a\n  Block\n    ✓ renders (12ms)\n    ✕ breaks\n  ● Block › breaks\n",
    { ["Block - renders"] = P, ["Block - breaks"] = F } },
  { "parse_log_chart_js", E .. "[31mChrome 120.0.0.0 (Linux x86_64) Chart.helpers.dom should get the size FAILED" .. E .. "[39m\nExecuted 3 of 4\n",
    { ["Chart.helpers.dom should get the size "] = F } },
  { "parse_log_marked", "1) marked should parse links\n  2) indented is not read\n", { ["marked should parse links"] = F } },
  { "parse_log_p5js", "  1) p5.Graphics\n       resizeCanvas:\n     Error: x\n{\n  \"a\": 1\n}\n",
    { ["p5.Graphics:resizeCanvas"] = F } },
  { "parse_log_react_pdf", "PASS tests/text.test.js (1.5 s)\nFAIL tests/image.test.js (12ms)\nPASS tests/plain.test.js\n",
    { ["tests/text.test.js"] = P, ["tests/image.test.js"] = F, ["tests/plain.test.js"] = P } },
  { "parse_log_carbon", "PASS packages/react/Button-test.js (3.2s)\n", { ["packages/react/Button-test.js"] = P } },
  { "parse_log_bpmn_js", E .. "[2KPhantomJS 2.1.1 (Linux 0.0.0) Modeler should import FAILED\nChrome Headless 120.0 (Linux x86_64) Viewer should render FAILED\n",
    { ["Modeler should import "] = F, ["Viewer should render "] = F } },
  { "parse_log_eslint", "  1) RuleTester\n       should report:\n     AssertionError [ERR_ASSERTION]: x\n",
    { ["RuleTester should report:"] = F } },
  { "parse_log_grommet", "PASS src/js/components/Box/__tests__/Box-test.js (5.1 s)\nFAIL src/js/components/Grid/__tests__/Grid-test.js\n",
    { ["src/js/components/Box/__tests__/Box-test.js"] = P, ["src/js/components/Grid/__tests__/Grid-test.js"] = F } },
  { "parse_log_highlightjs", "  hljs\n    ✓ detects (5ms)\n    1) breaks\n\n  1 passing\n  1) hljs breaks:\n",
    { ["hljs.detects"] = P, ["hljs.breaks"] = F } },
  { "parse_log_lighthouse", "running 2 test files\n  audit\n    ✔ passes (12ms)\n    1) fails\n  1 passing\n",
    { passes = P, fails = F }, { version = "9.5" } }, -- the run is stripped: "audit" is no suite
  { "parse_log_lighthouse", "PASS lighthouse-core/test/a-test.js\n", { ["lighthouse-core/test/a-test.js"] = P }, { version = "5.0" } },
  { "parse_log_lighthouse", '+ ./node_modules/.bin/mocha --reporter json\n{\n"passes": [\n  {\n  "fullTitle": "a works",\n  }\n],\n"failures": [\n  {\n  "fullTitle": "b breaks",\n  }\n],\n}\n',
    { ["a works"] = P, ["b breaks"] = F }, { version = "2.0" } },
  { "parse_log_next", "+ xvfb-run karma\nStarting browser Chrome\n  Button\n    ✓ renders\n    ✗ clicks\nTOTAL: 1 FAILED\n",
    { ["Button - renders"] = P, ["Button - clicks"] = F }, { version = "1.25" } },
  { "parse_log_next", "Running: button.spec.js)\n\n\n  Button\n    ✓ renders (1ms)\n    1) clicks\n",
    { ["Button: renders"] = P, ["Button: clicks"] = F }, { version = "1.27" } },
  { "parse_log_openlayers", "Chrome Headless 120.0 (Linux x86_64) ol/Map renders FAILED\n  1) ol/View\n       fits:\n     Error: x\ncase heatmap: mismatch 0.02\n",
    { ["ol/Map renders"] = F, ["ol/View fits:"] = F, heatmap = F } },
  { "parse_log_prismjs", '+ ./node_modules/.bin/mocha tests/run.js --reporter json\n{"stats": {}, "failures": [{"fullTitle": "lang css"}], "passes": [{"fullTitle": "lang js"}]}\n',
    { ["lang css"] = F, ["lang js"] = P } },
  { "parse_log_quarto_cli", "[smoke] render /tmp/abc.qmd ... " .. E .. "[32mok\n[unit] parse ... " .. E .. "[31mFAILED\n[unit] hangs\nERRORS\n[unit] after ... ok\n",
    { ["[smoke] render /tmp/0"] = P, ["[unit] parse"] = F, ["[unit] hangs"] = F } },
}
