--- rock.agent.swebench: SWE-bench's constants and its per-repository data,
-- looked up by a task's repo and version.
--   local swe = require "rock.agent.swebench"
--   swe.spec("django/django", "5.0")   -- { test_cmd=, install=, eval_commands=, ... } or nil
--   swe.parser_for("django/django")    -- "parse_log_django" or nil
--   swe.family("tokio-rs/tokio")       -- "rust" (the specs_<family> holding the repo) or nil
-- The specs are SWE-bench 4.1.0's (specs_<family>.lua, editable data:
-- Python for Lite/Verified; c, go, java, javascript, php, ruby, rust for
-- Multilingual, and Multimodal's JS repos); the markers, statuses and
-- FAIL_ONLY_REPOS follow SWE-bench 5.0.x.
-- The rest of SWE-bench's grading: eval_script.lua (the script), rules.lua
-- (the log and the grade), patch.lua (what a patch may touch).
local M = {}

--- The log's markers (swebench/harness/constants).
M.START_MARKER = ">>>>> Start Test Output"
M.END_MARKER = ">>>>> End Test Output"
M.EXIT_CODE_MARKER = ">>>>> Test Exit Code"
M.EXIT_CODE_VAR = "SWEBENCH_TEST_EXIT_CODE"
M.APPLY_PASS = ">>>>> Applied Patch"
M.APPLY_FAIL = ">>>>> Patch Apply Failed"
M.RESET_FAILED = ">>>>> Reset Failed"
M.TESTS_ERROR = ">>>>> Tests Errored"
M.TESTS_TIMEOUT = ">>>>> Tests Timed Out"
--- A log holding any of these is not graded (5.0.x get_logs_eval).
M.BAD_CODES = { M.APPLY_FAIL, M.RESET_FAILED, M.TESTS_ERROR, M.TESTS_TIMEOUT }

--- Paths of a test patch that are not tests (SWE-bench's NON_TEST_EXTS,
--- "csv" without its dot as SWE-bench has it), matched as suffixes.
M.NON_TEST_EXTS = { ".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml",
  ".yaml", ".toml" }

--- Repositories graded fail_only when the row does not say (5.0.x).
M.FAIL_ONLY_REPOS = {
  ["chartjs/Chart.js"] = true, ["processing/p5.js"] = true, ["markedjs/marked"] = true,
  ["bpmn-io/bpmn-js"] = true, ["openlayers/openlayers"] = true, ["eslint/eslint"] = true,
}

--- The log parser of each repository (4.1.0's MAP_REPO_TO_PARSER: _PY,
--- then _C, _GO, _JAVA, _JS, _PHP, _RUBY, _RUST): the names
--- rock.agent.parsers knows.
M.REPO_PARSERS = {
  ["astropy/astropy"] = "parse_log_astropy",
  ["django/django"] = "parse_log_django",
  ["marshmallow-code/marshmallow"] = "parse_log_marshmallow",
  ["matplotlib/matplotlib"] = "parse_log_matplotlib",
  ["mwaskom/seaborn"] = "parse_log_seaborn",
  ["pallets/flask"] = "parse_log_flask",
  ["psf/requests"] = "parse_log_requests",
  ["pvlib/pvlib-python"] = "parse_log_pvlib",
  ["pydata/xarray"] = "parse_log_xarray",
  ["pydicom/pydicom"] = "parse_log_pydicom",
  ["pylint-dev/astroid"] = "parse_log_astroid",
  ["pylint-dev/pylint"] = "parse_log_pylint",
  ["pytest-dev/pytest"] = "parse_log_pytest",
  ["pyvista/pyvista"] = "parse_log_pyvista",
  ["scikit-learn/scikit-learn"] = "parse_log_scikit",
  ["sqlfluff/sqlfluff"] = "parse_log_sqlfluff",
  ["sphinx-doc/sphinx"] = "parse_log_sphinx",
  ["sympy/sympy"] = "parse_log_sympy",
  -- c
  ["redis/redis"] = "parse_log_redis",
  ["jqlang/jq"] = "parse_log_jq",
  ["nlohmann/json"] = "parse_log_doctest",
  ["micropython/micropython"] = "parse_log_micropython_test",
  ["valkey-io/valkey"] = "parse_log_redis",
  ["fmtlib/fmt"] = "parse_log_googletest",
  -- go
  ["caddyserver/caddy"] = "parse_log_gotest",
  ["hashicorp/terraform"] = "parse_log_gotest",
  ["prometheus/prometheus"] = "parse_log_gotest",
  ["gohugoio/hugo"] = "parse_log_gotest",
  ["gin-gonic/gin"] = "parse_log_gotest",
  -- java
  ["google/gson"] = "parse_log_maven",
  ["apache/druid"] = "parse_log_maven",
  ["javaparser/javaparser"] = "parse_log_maven",
  ["projectlombok/lombok"] = "parse_log_ant",
  ["apache/lucene"] = "parse_log_gradle_custom",
  ["reactivex/rxjava"] = "parse_log_gradle_custom",
  -- javascript
  ["Automattic/wp-calypso"] = "parse_log_calypso",
  ["chartjs/Chart.js"] = "parse_log_chart_js",
  ["markedjs/marked"] = "parse_log_marked",
  ["processing/p5.js"] = "parse_log_p5js",
  ["diegomura/react-pdf"] = "parse_log_react_pdf",
  ["babel/babel"] = "parse_log_jest",
  ["vuejs/core"] = "parse_log_vitest",
  ["facebook/docusaurus"] = "parse_log_jest",
  ["immutable-js/immutable-js"] = "parse_log_immutable_js",
  ["mrdoob/three.js"] = "parse_log_tap",
  ["preactjs/preact"] = "parse_log_karma",
  ["axios/axios"] = "parse_log_tap",
  -- php
  ["phpoffice/phpspreadsheet"] = "parse_log_phpunit",
  ["laravel/framework"] = "parse_log_phpunit",
  ["php-cs-fixer/php-cs-fixer"] = "parse_log_phpunit",
  ["briannesbitt/carbon"] = "parse_log_phpunit",
  -- ruby
  ["jekyll/jekyll"] = "parse_log_jekyll",
  ["fluent/fluentd"] = "parse_log_ruby_unit",
  ["fastlane/fastlane"] = "parse_log_rspec_transformed_json",
  ["jordansissel/fpm"] = "parse_log_rspec_transformed_json",
  ["faker-ruby/faker"] = "parse_log_ruby_unit",
  ["rubocop/rubocop"] = "parse_log_rspec_transformed_json",
  -- rust
  ["burntsushi/ripgrep"] = "parse_log_cargo",
  ["sharkdp/bat"] = "parse_log_cargo",
  ["astral-sh/ruff"] = "parse_log_cargo",
  ["tokio-rs/tokio"] = "parse_log_cargo",
  ["uutils/coreutils"] = "parse_log_cargo",
  ["nushell/nushell"] = "parse_log_cargo",
  ["tokio-rs/axum"] = "parse_log_cargo",
}

--- The spec families loaded (rock.agent.swebench.specs_<family>).
M.SPEC_FAMILIES = { "python", "c", "go", "java", "javascript", "php", "ruby", "rust" }

--- SWE-bench's conda layout in its images.
M.CONDA_ACTIVATE = "/opt/miniconda3/bin/activate"
M.CONDA_ENV = "testbed"

local specs, families

--- Every spec: repo -> version -> fields.
---@return table<string, table<string, table>>
function M.specs()
  if specs then return specs end
  specs, families = {}, {}
  for _, family in ipairs(M.SPEC_FAMILIES) do
    for repo, versions in pairs(require("rock.agent.swebench.specs_" .. family)) do
      specs[repo] = versions
      families[repo] = family
    end
  end
  return specs
end

--- The spec family of repo ("python", "go", "javascript", ...: SWE-bench's
--- language of the repo, which picks how its eval script is written), or nil.
---@param repo string
---@return string|nil
function M.family(repo)
  M.specs()
  return families[repo]
end

--- The spec of repo at version, or nil.
---@param repo string
---@param version string|nil
---@return table|nil
function M.spec(repo, version)
  if type(repo) ~= "string" or type(version) ~= "string" then return nil end
  local versions = M.specs()[repo]
  return versions and versions[version]
end

--- A spec's test command as one string: 4.1.0's test_cmd is a string or
--- a list of lines (get_test_cmds), which the eval script joins with "\n".
---@param spec table|nil
---@return string|nil
function M.test_cmd_of(spec)
  local c = spec and spec.test_cmd
  if type(c) == "table" then return table.concat(c, "\n") end
  return c
end

--- Whether SWE-bench has specs for repo (some version).
function M.known_repo(repo) return M.specs()[repo] ~= nil end

--- The parser SWE-bench uses for repo, or nil.
function M.parser_for(repo) return M.REPO_PARSERS[repo] end

return M
