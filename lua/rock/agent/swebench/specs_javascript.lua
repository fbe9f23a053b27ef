--- rock.agent.swebench.specs_javascript: SWE-bench 4.1.0's specs for its javascript
-- repositories (MAP_REPO_VERSION_TO_SPECS_JS in swebench/harness/constants/
-- javascript.py at tag v4.1.0: SWE-bench Multilingual and Multimodal), as data: repo -> version ->
-- fields. The eval script (rock.agent.swebench.eval_script, as 4.1.0's
-- make_eval_script_list_common / _js) runs build after the test patch and
-- test_cmd (a string, or a list of lines) between the markers; it runs
-- no install, no pre_install and activates no env. pre_install, install
-- and docker_specs say how SWE-bench builds the instance's image (rock
-- does not build images; kept so the table is the spec); apt-pkgs is left
-- out (image building only). Edit a row to change how that repo and
-- version is graded; a task's own test_cmd / eval_script / log_parser
-- fields override these.
-- Automattic/wp-calypso's test commands are made from the test patch's
-- paths (rock.agent.swebench.eval_script, as 4.1.0's get_test_cmds_calypso);
-- its test_cmd here is what a calypso row without such paths runs.
return {
  ["Automattic/wp-calypso"] = {
    ["0.8"] = {
      docker_specs = { node_version = "0.8" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["4.2.3"] = {
      docker_specs = { node_version = "4.2.3" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["4.3.0"] = {
      docker_specs = { node_version = "4.3.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["5.10.1"] = {
      docker_specs = { node_version = "5.10.1" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["5.11.1"] = {
      docker_specs = { node_version = "5.11.1" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.1.0"] = {
      docker_specs = { node_version = "6.1.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.7.0"] = {
      docker_specs = { node_version = "6.7.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.9.0"] = {
      docker_specs = { node_version = "6.9.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.9.1"] = {
      docker_specs = { node_version = "6.9.1" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.9.4"] = {
      docker_specs = { node_version = "6.9.4" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.10.0"] = {
      docker_specs = { node_version = "6.10.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.10.2"] = {
      docker_specs = { node_version = "6.10.2" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.10.3"] = {
      docker_specs = { node_version = "6.10.3" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.11.1"] = {
      docker_specs = { node_version = "6.11.1" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.11.2"] = {
      docker_specs = { node_version = "6.11.2" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["6.11.5"] = {
      docker_specs = { node_version = "6.11.5" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["8.9.1"] = {
      docker_specs = { node_version = "8.9.1" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["8.9.3"] = {
      docker_specs = { node_version = "8.9.3" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["8.9.4"] = {
      docker_specs = { node_version = "8.9.4" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["8.11.0"] = {
      docker_specs = { node_version = "8.11.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["8.11.2"] = {
      docker_specs = { node_version = "8.11.2" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.4.1"] = {
      docker_specs = { node_version = "10.4.1" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.5.0"] = {
      docker_specs = { node_version = "10.5.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.6.0"] = {
      docker_specs = { node_version = "10.6.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.9.0"] = {
      docker_specs = { node_version = "10.9.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.10.0"] = {
      docker_specs = { node_version = "10.10.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.12.0"] = {
      docker_specs = { node_version = "10.12.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.13.0"] = {
      docker_specs = { node_version = "10.13.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.14.0"] = {
      docker_specs = { node_version = "10.14.0" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.15.2"] = {
      docker_specs = { node_version = "10.15.2" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
    ["10.16.3"] = {
      docker_specs = { node_version = "10.16.3" },
      install = { "npm install --unsafe-perm" },
      test_cmd = "npm run test-client",
    },
  },
  ["chartjs/Chart.js"] = {
    ["4.0"] = {
      docker_specs = {
        node_version = "21.6.2",
        pnpm_version = "7.9.0",
        run_args = { cap_add = { "SYS_ADMIN" } },
      },
      install = { "pnpm install", "pnpm run build" },
      test_cmd = {
        "pnpm install",
        "pnpm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.cjs --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["4.1"] = {
      docker_specs = {
        node_version = "21.6.2",
        pnpm_version = "7.9.0",
        run_args = { cap_add = { "SYS_ADMIN" } },
      },
      install = { "pnpm install", "pnpm run build" },
      test_cmd = {
        "pnpm install",
        "pnpm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.cjs --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["4.2"] = {
      docker_specs = {
        node_version = "21.6.2",
        pnpm_version = "7.9.0",
        run_args = { cap_add = { "SYS_ADMIN" } },
      },
      install = { "pnpm install", "pnpm run build" },
      test_cmd = {
        "pnpm install",
        "pnpm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.cjs --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["4.3"] = {
      docker_specs = {
        node_version = "21.6.2",
        pnpm_version = "7.9.0",
        run_args = { cap_add = { "SYS_ADMIN" } },
      },
      install = { "pnpm install", "pnpm run build" },
      test_cmd = {
        "pnpm install",
        "pnpm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.cjs --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["4.4"] = {
      docker_specs = {
        node_version = "21.6.2",
        pnpm_version = "7.9.0",
        run_args = { cap_add = { "SYS_ADMIN" } },
      },
      install = { "pnpm install", "pnpm run build" },
      test_cmd = {
        "pnpm install",
        "pnpm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.cjs --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["3.0"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install" },
      test_cmd = {
        "npm install",
        "npm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["3.1"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install" },
      test_cmd = {
        "npm install",
        "npm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["3.2"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install" },
      test_cmd = {
        "npm install",
        "npm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["3.3"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install" },
      test_cmd = {
        "npm install",
        "npm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["3.4"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install" },
      test_cmd = {
        "npm install",
        "npm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["3.5"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install" },
      test_cmd = {
        "npm install",
        "npm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["3.6"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install" },
      test_cmd = {
        "npm install",
        "npm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["3.7"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install" },
      test_cmd = {
        "npm install",
        "npm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["3.8"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install" },
      test_cmd = {
        "npm install",
        "npm run build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false\"",
      },
    },
    ["2.0"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
    ["2.1"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
    ["2.2"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
    ["2.3"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
    ["2.4"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
    ["2.5"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
    ["2.6"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
    ["2.7"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
    ["2.8"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
    ["2.9"] = {
      docker_specs = { node_version = "21.6.2", run_args = { cap_add = { "SYS_ADMIN" } } },
      install = { "npm install", "npm install -g gulp-cli" },
      test_cmd = {
        "npm install",
        "gulp build",
        "xvfb-run --server-args=\"-screen 0 1280x1024x24 -ac :99\" su chromeuser -c \"gulp test\"",
      },
    },
  },
  ["markedjs/marked"] = {
    ["0.3"] = {
      docker_specs = { node_version = "12.22.12" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["0.5"] = {
      docker_specs = { node_version = "12.22.12" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["0.6"] = {
      docker_specs = { node_version = "12.22.12" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["0.7"] = {
      docker_specs = { node_version = "12.22.12" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["1.0"] = {
      docker_specs = { node_version = "12.22.12" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["1.1"] = {
      docker_specs = { node_version = "12.22.12" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["1.2"] = {
      docker_specs = { node_version = "12.22.12" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["2.0"] = {
      docker_specs = { node_version = "12.22.12" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["3.9"] = {
      docker_specs = { node_version = "12.22.12" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["4.0"] = {
      docker_specs = { node_version = "20.16.0" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["4.1"] = {
      docker_specs = { node_version = "20.16.0" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
    ["5.0"] = {
      docker_specs = { node_version = "20.16.0" },
      install = { "npm install" },
      test_cmd = "./node_modules/.bin/jasmine --no-color --config=jasmine.json",
    },
  },
  ["processing/p5.js"] = {
    ["0.10"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["0.2"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["0.4"] = {
      docker_specs = { node_version = "14.17.3" },
      install = { "npm install", "./node_modules/.bin/grunt yui" },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["0.5"] = {
      docker_specs = { node_version = "14.17.3" },
      install = { "npm install", "./node_modules/.bin/grunt yui" },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["0.6"] = {
      docker_specs = { node_version = "14.17.3" },
      install = { "npm install", "./node_modules/.bin/grunt yui" },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["0.7"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["0.8"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["0.9"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.0"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.1"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.2"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.3"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.4"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.5"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.6"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.7"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.8"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
    ["1.9"] = {
      docker_specs = { node_version = "14.17.3" },
      install = {
        "npm install",
        "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD='' node node_modules/puppeteer/install.js",
        "./node_modules/.bin/grunt yui",
      },
      test_cmd = [==[sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js
stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force]==],
    },
  },
  ["diegomura/react-pdf"] = {
    ["1.0"] = {
      docker_specs = { node_version = "8.17.0" },
      install = { "npm install", "npm install cheerio@1.0.0-rc.3" },
      test_cmd = "./node_modules/.bin/jest --no-color",
    },
    ["1.1"] = {
      docker_specs = { node_version = "8.17.0" },
      install = { "npm install", "npm install cheerio@1.0.0-rc.3" },
      test_cmd = "./node_modules/.bin/jest --no-color",
    },
    ["1.2"] = {
      docker_specs = { node_version = "8.17.0" },
      install = { "npm install", "npm install cheerio@1.0.0-rc.3" },
      test_cmd = "./node_modules/.bin/jest --no-color",
    },
    ["2.0"] = {
      docker_specs = { node_version = "18.20.4" },
      install = { "npm i -g yarn", "yarn install" },
      test_cmd = "NODE_OPTIONS=\"--experimental-vm-modules\" ./node_modules/.bin/jest --no-color",
    },
  },
  ["babel/babel"] = {
    ["14532"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "make bootstrap" },
      build = { "make build" },
      test_cmd = { "yarn jest babel-generator --verbose" },
    },
    ["13928"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "make bootstrap" },
      build = { "make build" },
      test_cmd = { "yarn jest babel-parser -t \"arrow\" --verbose" },
    },
    ["15649"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "make bootstrap" },
      build = { "make build" },
      test_cmd = { "yarn jest packages/babel-traverse/test/scope.js --verbose" },
    },
    ["15445"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "make bootstrap" },
      build = { "make build" },
      test_cmd = { "yarn jest packages/babel-generator/test/index.js -t \"generation \" --verbose" },
    },
    ["16130"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "make bootstrap" },
      build = { "make build" },
      test_cmd = { "yarn jest babel-helpers --verbose" },
    },
  },
  ["vuejs/core"] = {
    ["11899"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "pnpm i" },
      build = { "pnpm run build compiler-sfc" },
      test_cmd = {
        "pnpm run test packages/compiler-sfc/__tests__/compileStyle.spec.ts --no-watch --reporter=verbose",
      },
    },
    ["11870"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "pnpm i" },
      test_cmd = {
        "pnpm run test packages/runtime-core/__tests__/helpers/renderList.spec.ts --no-watch --reporter=verbose",
      },
    },
    ["11739"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "pnpm i" },
      test_cmd = {
        "pnpm run test packages/runtime-core/__tests__/hydration.spec.ts --no-watch --reporter=verbose -t \"mismatch handling\"",
      },
    },
    ["11915"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "pnpm i" },
      test_cmd = {
        "pnpm run test packages/compiler-core/__tests__/parse.spec.ts --no-watch --reporter=verbose -t \"Element\"",
      },
    },
    ["11589"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "pnpm i" },
      test_cmd = {
        "pnpm run test packages/runtime-core/__tests__/apiWatch.spec.ts --no-watch --reporter=verbose",
      },
    },
  },
  ["facebook/docusaurus"] = {
    ["10309"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "yarn install" },
      test_cmd = {
        "yarn test packages/docusaurus-plugin-content-docs/src/client/__tests__/docsClientUtils.test.ts --verbose",
      },
    },
    ["10130"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "yarn install" },
      test_cmd = { "yarn test packages/docusaurus/src/server/__tests__/brokenLinks.test.ts --verbose" },
    },
    ["9897"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "yarn install" },
      test_cmd = { "yarn test packages/docusaurus-utils/src/__tests__/markdownUtils.test.ts --verbose" },
    },
    ["9183"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "yarn install" },
      test_cmd = { "yarn test packages/docusaurus-theme-classic/src/__tests__/options.test.ts --verbose" },
    },
    ["8927"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "yarn install" },
      test_cmd = { "yarn test packages/docusaurus-utils/src/__tests__/markdownLinks.test.ts --verbose" },
    },
  },
  ["immutable-js/immutable-js"] = {
    ["2006"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      build = { "npm run build" },
      test_cmd = { "npx jest __tests__/Range.ts --verbose" },
    },
    ["2005"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      build = { "npm run build" },
      test_cmd = {
        "npx jest __tests__/OrderedMap.ts __tests__/OrderedSet.ts --silent --json | jq -r '.testResults[].assertionResults[] | \"[\" + (.status | ascii_upcase) + \"] \" + ((.ancestorTitles | join(\" > \")) + (if .ancestorTitles | length > 0 then \" > \" else \"\" end) + .title)'",
      },
    },
  },
  ["mrdoob/three.js"] = {
    ["27395"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install --ignore-scripts" },
      test_cmd = { "npx qunit test/unit/src/math/Sphere.tests.js" },
    },
    ["26589"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install --ignore-scripts" },
      test_cmd = {
        "npx qunit test/unit/src/objects/Line.tests.js test/unit/src/objects/Mesh.tests.js test/unit/src/objects/Points.tests.js",
      },
    },
    ["25687"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install --ignore-scripts" },
      test_cmd = { "npx qunit test/unit/src/core/Object3D.tests.js -f \"/json|clone|copy/i\"" },
    },
  },
  ["preactjs/preact"] = {
    ["4152"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"test/browser/components.test.js\"",
      },
    },
    ["4316"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"test/browser/events.test.js\"",
      },
    },
    ["4245"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"hooks/test/browser/useId.test.js\"",
      },
    },
    ["4182"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"hooks/test/browser/errorBoundary.test.js\"",
      },
    },
    ["4436"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"test/browser/refs.test.js\"",
      },
    },
    ["3763"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"test/browser/lifecycles/componentDidMount.test.js\"",
      },
    },
    ["3739"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"hooks/test/browser/useState.test.js\"",
      },
    },
    ["3689"] = {
      docker_specs = { node_version = "18", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"hooks/test/browser/errorBoundary.test.js\"",
      },
    },
    ["3567"] = {
      docker_specs = { node_version = "18", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"hooks/test/browser/useEffect.test.js\"",
      },
    },
    ["3562"] = {
      docker_specs = { node_version = "18", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"compat/test/browser/render.test.js\"",
      },
    },
    ["3454"] = {
      docker_specs = { node_version = "18", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"test/browser/svg.test.js\"",
      },
    },
    ["3345"] = {
      docker_specs = { node_version = "18", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"hooks/test/browser/useEffect.test.js\"",
      },
    },
    ["3062"] = {
      docker_specs = { node_version = "16", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"test/browser/render.test.js\"",
      },
    },
    ["3010"] = {
      docker_specs = { node_version = "16", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"test/browser/render.test.js\"",
      },
    },
    ["2927"] = {
      docker_specs = { node_version = "16", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"test/browser/render.test.js\"",
      },
    },
    ["2896"] = {
      docker_specs = { node_version = "16", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"compat/test/browser/memo.test.js\"",
      },
    },
    ["2757"] = {
      docker_specs = { node_version = "16", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = {
        "COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=\"test/browser/render.test.js\"",
      },
    },
  },
  ["axios/axios"] = {
    ["5892"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = { "npx mocha test/unit/adapters/http.js -R tap -g 'compression'" },
    },
    ["5316"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      build = { "npm install" },
      test_cmd = { "npx mocha test/unit/adapters/http.js -R tap -g 'FormData'" },
    },
    ["4738"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = { "timeout 10s npx mocha -R tap test/unit/adapters/http.js -g 'timeout'" },
    },
    ["4731"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = { "npx mocha -R tap test/unit/adapters/http.js -g 'body length'" },
    },
    ["6539"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = { "npx mocha -R tap test/unit/regression/SNYK-JS-AXIOS-7361793.js" },
    },
    ["5085"] = {
      docker_specs = { node_version = "20", _variant = "js_2" },
      install = { "npm install" },
      test_cmd = { "npx mocha -R tap test/unit/regression/bugs.js" },
    },
  },
}
