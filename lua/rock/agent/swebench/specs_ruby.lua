--- rock.agent.swebench.specs_ruby: SWE-bench 4.1.0's specs for its ruby
-- repositories (MAP_REPO_VERSION_TO_SPECS_RUBY in swebench/harness/constants/
-- ruby.py at tag v4.1.0: SWE-bench Multilingual), as data: repo -> version ->
-- fields. The eval script (rock.agent.swebench.eval_script, as 4.1.0's
-- make_eval_script_list_common) runs build after the test patch and
-- test_cmd (a string, or a list of lines) between the markers; it runs
-- no install, no pre_install and activates no env. pre_install, install
-- and docker_specs say how SWE-bench builds the instance's image (rock
-- does not build images; kept so the table is the spec); apt-pkgs is left
-- out (image building only). Edit a row to change how that repo and
-- version is graded; a task's own test_cmd / eval_script / log_parser
-- fields override these.
return {
  ["jekyll/jekyll"] = {
    ["9141"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "script/bootstrap" },
      test_cmd = { "bundle exec ruby -I test test/test_site.rb -v -n \"/static files/\"" },
    },
    ["8761"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "script/bootstrap" },
      test_cmd = {
        "bundle exec cucumber --publish-quiet --format progress --no-color features/post_data.feature:6 features/post_data.feature:30",
      },
    },
    ["8047"] = {
      docker_specs = { ruby_version = "3.3" },
      pre_install = { "sed -i '/^[[:space:]]*install_if.*mingw/,/^[[:space:]]*end/d' Gemfile" },
      install = { "script/bootstrap", "bundle add webrick" },
      test_cmd = { "bundle exec ruby -I test test/test_filters.rb -v -n \"/where_exp filter/\"" },
    },
    ["8167"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "script/bootstrap", "bundle add webrick" },
      test_cmd = { "bundle exec ruby -I test test/test_utils.rb -v -n \"/Utils.slugify/\"" },
    },
    ["8771"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "script/bootstrap" },
      test_cmd = {
        "bundle exec cucumber --publish-quiet --format progress --no-color features/incremental_rebuild.feature:27 features/incremental_rebuild.feature:70",
      },
    },
  },
  ["fluent/fluentd"] = {
    ["4598"] = {
      docker_specs = { ruby_version = "3.3" },
      pre_install = { "echo \"gem 'console', '1.29'\" >> Gemfile" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/plugin_helper/test_http_server_helper.rb -v -n '/mount/'" },
    },
    ["4311"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/config/test_system_config.rb -v -n '/rotate_age/'" },
    },
    ["4655"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/plugin/test_in_http.rb -v -n '/test_add/'" },
    },
    ["4030"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/plugin/out_forward/test_ack_handler.rb -v" },
    },
    ["3917"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/test_config.rb -v" },
    },
    ["3640"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        "bundle exec ruby test/plugin_helper/test_retry_state.rb -v -n '/exponential backoff/'",
      },
    },
    ["3641"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/test_supervisor.rb -v" },
    },
    ["3616"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/plugin/test_in_http.rb -v -n '/test_application/'" },
    },
    ["3631"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/test_event_router.rb -v -n '/handle_emits_error/'" },
    },
    ["3466"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        "bundle exec ruby test/plugin/test_in_tail.rb -v -n '/test_should_replace_target_info/'",
      },
    },
    ["3328"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        "bundle exec ruby test/plugin/test_in_tail.rb -v -n '/test_ENOENT_error_after_setup_watcher/'",
      },
    },
    ["3608"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        "bundle exec ruby test/plugin/test_output_as_buffered_retries.rb -v -n '/retry_max_times/'",
      },
    },
  },
  ["fastlane/fastlane"] = {
    ["21857"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install --jobs=$(nproc)" },
      test_cmd = {
        "FASTLANE_SKIP_UPDATE_CHECK=1 bundle exec rspec ./fastlane/spec/lane_manager_base_spec.rb --no-color --format json | tail -n +2 | jq -r '.examples[] | \"\\(.description) - \\(.id) - \\(.status)\"'",
      },
    },
    ["20958"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install --jobs=$(nproc)" },
      test_cmd = {
        "FASTLANE_SKIP_UPDATE_CHECK=1 bundle exec rspec ./fastlane/spec/actions_specs/import_from_git_spec.rb --no-color --format json | tail -n +2 | jq -r '.examples[] | \"\\(.description) - \\(.id) - \\(.status)\"'",
      },
    },
    ["20642"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install --jobs=$(nproc)" },
      test_cmd = {
        "FASTLANE_SKIP_UPDATE_CHECK=1 bundle exec rspec ./frameit/spec/device_spec.rb --no-color --format json | tail -n +2 | jq -r '.examples[] | \"\\(.description) - \\(.id) - \\(.status)\"'",
      },
    },
    ["19765"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install --jobs=$(nproc)" },
      test_cmd = {
        "FASTLANE_SKIP_UPDATE_CHECK=1 bundle exec rspec ./fastlane/spec/actions_specs/download_dsyms_spec.rb --no-color --format json | tail -n +2 | jq -r '.examples[] | \"\\(.description) - \\(.id) - \\(.status)\"'",
      },
    },
    ["20975"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install --jobs=$(nproc)" },
      test_cmd = {
        "FASTLANE_SKIP_UPDATE_CHECK=1 bundle exec rspec ./match/spec/storage/s3_storage_spec.rb --no-color --format json | tail -n +2 | jq -r '.examples[] | \"\\(.description) - \\(.id) - \\(.status)\"'",
      },
    },
    ["19304"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install --jobs=$(nproc)" },
      test_cmd = {
        "FASTLANE_SKIP_UPDATE_CHECK=1 bundle exec rspec ./fastlane/spec/actions_specs/zip_spec.rb --no-color --format json | tail -n +2 | jq -r '.examples[] | \"\\(.description) - \\(.id) - \\(.status)\"'",
      },
    },
    ["19207"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install --jobs=$(nproc)" },
      test_cmd = {
        "FASTLANE_SKIP_UPDATE_CHECK=1 bundle exec rspec ./fastlane/spec/actions_specs/zip_spec.rb --no-color --format json | tail -n +2 | jq -r '.examples[] | \"\\(.description) - \\(.id) - \\(.status)\"'",
      },
    },
  },
  ["jordansissel/fpm"] = {
    ["1850"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        "bundle exec rspec spec/fpm/package/empty_spec.rb --no-color --format json | sed -n '/^{/,$p' | jq -r '.examples[] | \"\\(.description) - \\(.status)\"'",
      },
    },
    ["1829"] = {
      docker_specs = { ruby_version = "3.1" },
      install = { "bundle install" },
      test_cmd = {
        "bundle exec rspec spec/fpm/package/deb_spec.rb --no-color --format json | sed -n '/^{/,$p' | jq -r '.examples[] | \"\\(.description) - \\(.status)\"'",
      },
    },
  },
  ["faker-ruby/faker"] = {
    ["2970"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/faker/default/test_faker_internet.rb -v -n '/email/'" },
    },
    ["2705"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = { "bundle exec ruby test/faker/default/test_faker_internet.rb -v -n '/password/'" },
    },
  },
  ["rubocop/rubocop"] = {
    ["13705"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/lint/out_of_range_regexp_ref_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13687"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/lint/safe_navigation_chain_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13680"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/redundant_line_continuation_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13668"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/sole_nested_conditional_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13627"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/multiple_comparison_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13653"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/access_modifier_declarations_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13579"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/layout/line_continuation_spacing_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13560"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/file_null_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13503"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/dig_chain_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13479"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/layout/leading_comment_space_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13431"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/layout/empty_lines_around_method_body_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13424"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/safe_navigation_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13393"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/guard_clause_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13396"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/redundant_parentheses_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13375"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cli_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
    ["13362"] = {
      docker_specs = { ruby_version = "3.3" },
      install = { "bundle install" },
      test_cmd = {
        [==[bundle exec rspec spec/rubocop/cop/style/redundant_freeze_spec.rb --no-color --format json | sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end']==],
      },
    },
  },
}
