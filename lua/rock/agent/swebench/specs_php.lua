--- rock.agent.swebench.specs_php: SWE-bench 4.1.0's specs for its php
-- repositories (MAP_REPO_VERSION_TO_SPECS_PHP in swebench/harness/constants/
-- php.py at tag v4.1.0: SWE-bench Multilingual), as data: repo -> version ->
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
  ["phpoffice/phpspreadsheet"] = {
    ["4313"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Reader/Ods/FormulaTranslatorTest.php",
      },
    },
    ["4214"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Calculation/Functions/MathTrig/RoundDownTest.php",
      },
    },
    ["4186"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Writer/Xlsx/FunctionPrefixTest.php",
      },
    },
    ["4114"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Worksheet/Issue4112Test.php",
      },
    },
    ["3940"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Worksheet/WorksheetTest.php",
      },
    },
    ["3903"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Shared/StringHelperTest.php",
      },
    },
    ["3570"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Calculation/Functions/LookupRef/VLookupTest.php",
      },
    },
    ["3463"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Writer/Xlsx/FunctionPrefixTest.php",
      },
    },
    ["3469"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Style/StyleTest.php",
      },
    },
    ["3659"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Worksheet/Table/Issue3635Test.php",
      },
    },
  },
  ["laravel/framework"] = {
    ["53914"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer require orchestra/testbench-core --no-update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Integration/Database/DatabaseConnectionsTest.php",
      },
    },
    ["53206"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer require orchestra/testbench-core --no-update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/Support/SupportJsTest.php" },
    },
    ["52866"] = {
      docker_specs = { php_version = "8.3.16" },
      install = {
        "composer require laravel/prompts --no-update",
        "composer require orchestra/testbench-core --no-update",
        "composer install",
      },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Container/ContextualAttributeBindingTest.php",
      },
    },
    ["52684"] = {
      docker_specs = { php_version = "8.3.16" },
      install = {
        "composer require laravel/prompts --no-update",
        "composer require orchestra/testbench-core --no-update",
        "composer install",
      },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/Support/SupportStrTest.php" },
    },
    ["52680"] = {
      docker_specs = { php_version = "8.3.16" },
      install = {
        "composer require laravel/prompts --no-update",
        "composer require orchestra/testbench-core --no-update",
        "composer install",
      },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Database/DatabaseEloquentInverseRelationTest.php",
      },
    },
    ["52451"] = {
      docker_specs = { php_version = "8.3.16" },
      install = {
        "composer require laravel/prompts --no-update",
        "composer require orchestra/testbench-core --no-update",
        "composer install",
      },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Validation/ValidationValidatorTest.php --filter 'custom'",
      },
    },
    ["53949"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer require orchestra/testbench-core --no-update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/Support/OnceTest.php" },
    },
    ["51890"] = {
      docker_specs = { php_version = "8.3.16" },
      install = {
        "composer require laravel/prompts --no-update",
        "composer require orchestra/testbench-core --no-update",
        "composer install",
      },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Validation/ValidationValidatorTest.php --filter 'attribute'",
      },
    },
    ["51195"] = {
      docker_specs = { php_version = "8.3.16" },
      install = {
        "composer require laravel/prompts --no-update",
        "composer require orchestra/testbench-core --no-update",
        "composer install",
      },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/View/Blade/BladeVerbatimTest.php" },
    },
    ["48636"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer require laravel/prompts --no-update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Database/DatabaseEloquentModelTest.php",
      },
    },
    ["48573"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer require laravel/prompts --no-update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/Cache/CacheArrayStoreTest.php" },
    },
    ["46234"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer require laravel/prompts --no-update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Routing/RoutingUrlGeneratorTest.php",
      },
    },
    ["53696"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer require orchestra/testbench-core --no-update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Database/DatabaseSchemaBlueprintTest.php",
      },
    },
  },
  ["php-cs-fixer/php-cs-fixer"] = {
    ["8367"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/Import/FullyQualifiedStrictTypesFixerTest.php",
      },
    },
    ["8331"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/LanguageConstruct/NullableTypeDeclarationFixerTest.php",
      },
    },
    ["8075"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/PhpUnit/PhpUnitAttributesFixerTest.php",
      },
    },
    ["8064"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/StringNotation/SimpleToComplexStringVariableFixerTest.php",
      },
    },
    ["7998"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/Casing/ConstantCaseFixerTest.php",
      },
    },
    ["7875"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/Whitespace/StatementIndentationFixerTest.php",
      },
    },
    ["7635"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/Import/FullyQualifiedStrictTypesFixerTest.php",
      },
    },
    ["7523"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/Operator/BinaryOperatorSpacesFixerTest.php",
      },
    },
    ["8256"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/PhpTag/BlankLineAfterOpeningTagFixerTest.php",
      },
    },
    ["7663"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = {
        "vendor/bin/phpunit --testdox --colors=never tests/Fixer/Whitespace/StatementIndentationFixerTest.php",
      },
    },
  },
  ["briannesbitt/carbon"] = {
    ["3103"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/CarbonImmutable/SettersTest.php" },
    },
    ["3098"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/CarbonInterval/ConstructTest.php" },
    },
    ["3073"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/CarbonInterval/TotalTest.php" },
    },
    ["3041"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/CarbonPeriod/CreateTest.php" },
    },
    ["3005"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/CarbonInterval/ConstructTest.php" },
    },
    ["2981"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/CarbonInterval/TotalTest.php" },
    },
    ["2813"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      build = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/Factory/FactoryTest.php" },
    },
    ["2752"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/CarbonImmutable/IsTest.php" },
    },
    ["2665"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/Carbon/RoundTest.php" },
    },
    ["2762"] = {
      docker_specs = { php_version = "8.3.16" },
      install = { "composer update", "composer install" },
      test_cmd = { "vendor/bin/phpunit --testdox --colors=never tests/CarbonInterval/RoundingTest.php" },
    },
  },
}
