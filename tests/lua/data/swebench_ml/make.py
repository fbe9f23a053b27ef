"""make.py: made this folder's test data (and the first cut of rock's
lua/rock/agent/swebench/specs_<family>.lua) ONCE from SWE-bench 4.1.0's own
code. Not run by the tests.

  git -C SWE_BENCH_GIT archive v4.1.0 | tar -x -C SRC
  python3 make.py SRC pairs        > pairs.txt   # every (family, repo, version)
  python3 make.py SRC scripts                    # NAME.eval.sh from rows.jsonl
  python3 make.py SRC all          > all.jsonl   # every pair's script for one patch
  python3 make.py SRC parsers > parsers.json     # 4.1.0's parsers on ../parsers/logs
  python3 make.py SRC specs FAMILY > specs_FAMILY.lua

`scripts` needs unidiff (Debian: python3-unidiff). SWE-bench's package __init__
files import docker, datasets and the rest of the harness: they are not
run; swebench/harness/utils.py runs without its `datasets` import (the
functions used here do not touch it). Nothing else is replaced."""
import json, os, re, sys, types

SRC = sys.argv[1]
sys.path.insert(0, SRC)
sys.path.append("/usr/lib/python3/dist-packages")  # Debian's unidiff
for name in ["swebench", "swebench.harness", "swebench.harness.test_spec"]:
    m = types.ModuleType(name)
    m.__path__ = [os.path.join(SRC, *name.split("."))]
    sys.modules[name] = m
_text = open(os.path.join(SRC, "swebench/harness/utils.py")).read()
_text = _text.replace("from datasets import Dataset, load_dataset, load_from_disk\n", "")
_u = types.ModuleType("swebench.harness.utils")
sys.modules["swebench.harness.utils"] = _u
exec(compile(_text, "swebench/harness/utils.py", "exec"), _u.__dict__)

from swebench.harness.constants import (  # noqa: E402
    MAP_REPO_VERSION_TO_SPECS_C, MAP_REPO_VERSION_TO_SPECS_GO, MAP_REPO_VERSION_TO_SPECS_JAVA,
    MAP_REPO_VERSION_TO_SPECS_JS, MAP_REPO_VERSION_TO_SPECS_PHP, MAP_REPO_VERSION_TO_SPECS_RUBY,
    MAP_REPO_VERSION_TO_SPECS_RUST)

FAMILIES = {
    "c": MAP_REPO_VERSION_TO_SPECS_C, "go": MAP_REPO_VERSION_TO_SPECS_GO,
    "java": MAP_REPO_VERSION_TO_SPECS_JAVA, "javascript": MAP_REPO_VERSION_TO_SPECS_JS,
    "php": MAP_REPO_VERSION_TO_SPECS_PHP, "ruby": MAP_REPO_VERSION_TO_SPECS_RUBY,
    "rust": MAP_REPO_VERSION_TO_SPECS_RUST,
}
HERE = os.path.dirname(os.path.abspath(__file__))


def lua_str(s):
    # a multi-line string as a long bracket (editable as it reads), where it can be one
    if "\n" in s and not s.startswith("\n") and not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", s):
        eq = "=="
        while "]" + eq + "]" in s: eq += "="
        return "[" + eq + "[" + s + "]" + eq + "]"
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == "\\": out.append("\\\\")
        elif ch == '"': out.append('\\"')
        elif ch == "\n": out.append("\\n")
        elif ch == "\t": out.append("\\t")
        elif o < 32 or o == 127: out.append("\\%03d" % o)
        else: out.append(ch)
    out.append('"')
    return "".join(out)


def lua_key(k):
    return k if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", k) else "[" + lua_str(k) + "]"


def lua_val(v, ind):
    if isinstance(v, str): return lua_str(v)
    if isinstance(v, bool): return "true" if v else "false"
    if isinstance(v, int): return str(v)
    if isinstance(v, list):
        one = "{ " + ", ".join(lua_val(x, ind) for x in v) + " }"
        if len(one) + ind < 96 and "\n" not in one: return one
        pad = " " * (ind + 2)
        return "{\n" + "".join(pad + lua_val(x, ind + 2) + ",\n" for x in v) + " " * ind + "}"
    if isinstance(v, dict):
        parts = [lua_key(k) + " = " + lua_val(x, ind) for k, x in v.items()]
        one = "{ " + ", ".join(parts) + " }"
        if len(one) + ind < 96: return one
        pad = " " * (ind + 2)
        return "{\n" + "".join(pad + lua_key(k) + " = " + lua_val(x, ind + 2) + ",\n"
                               for k, x in v.items()) + " " * ind + "}"
    raise TypeError(type(v))


ORDER = ["docker_specs", "pre_install", "install", "build", "test_cmd"]


def specs(family):
    m = FAMILIES[family]
    out = ["return {"]
    for repo, versions in m.items():
        out.append("  [%s] = {" % lua_str(repo))
        for v, s in versions.items():
            assert set(s) <= set(ORDER) | {"apt-pkgs"}, (repo, v, set(s) - set(ORDER))
            out.append("    [%s] = {" % lua_str(v))
            for k in ORDER:
                if k in s:
                    out.append("      %s = %s," % (lua_key(k), lua_val(s[k], 6)))
            out.append("    },")
        out.append("  },")
    out.append("}")
    return "\n".join(out) + "\n"


def pairs():
    for family, m in FAMILIES.items():
        for repo, versions in m.items():
            for v in versions:
                print(family, repo, v)


def scripts():
    from swebench.harness.test_spec.test_spec import make_test_spec
    for line in open(os.path.join(HERE, "rows.jsonl")):
        row = json.loads(line)
        spec = make_test_spec(row)
        with open(os.path.join(HERE, row["instance_id"] + ".eval.sh"), "w") as f:
            f.write(spec.eval_script)


# one test patch for every pair: a changed file under client/ (wp-calypso
# makes its command from it)
ALL_PATCH = "diff --git a/client/x.js b/client/x.js\n--- a/client/x.js\n+++ b/client/x.js\n@@ -1 +1 @@\n-a\n+b\n"


def all_scripts():
    """every pair's eval script for ALL_PATCH, as JSON lines {repo, version, script}"""
    from swebench.harness.test_spec.test_spec import make_test_spec
    for family, m in FAMILIES.items():
        for repo, versions in m.items():
            for v in versions:
                row = {"instance_id": repo.replace("/", "__") + "-" + v, "repo": repo, "version": v,
                       "base_commit": "0123456789abcdef", "test_patch": ALL_PATCH}
                print(json.dumps({"repo": repo, "version": v, "script": make_test_spec(row).eval_script}))


def parsers():
    """what each of 4.1.0's non-Python parsers gives for each captured log of
    ../parsers/logs: {"LOG PARSER INSTANCE_ID": {test: status} or {"__raised__": error}}"""
    import glob, importlib

    class Spec:  # what the parsers read of a TestSpec
        def __init__(self, instance_id): self.instance_id = instance_id
    # the parsers that pick a runner by instance run as each of theirs
    ids = {"parse_log_jekyll": ["jekyll__jekyll-9141", "jekyll__jekyll-8761"],
           "parse_log_immutable_js": ["immutable-js__immutable-js-2005", "immutable-js__immutable-js-2006"]}
    fns = {}
    for fam in FAMILIES:
        mod = importlib.import_module("swebench.harness.log_parsers." + fam)
        fns.update({n: getattr(mod, n) for n in dir(mod) if n.startswith("parse_log_")})
    out = {}
    for path in sorted(glob.glob(os.path.join(HERE, "..", "parsers", "logs", "*.log"))):
        text = open(path, encoding="utf-8").read()
        for name, fn in sorted(fns.items()):
            for iid in ids.get(name, ["x__y-1"]):
                try:
                    r = fn(text, Spec(iid))
                except Exception as e:
                    r = {"__raised__": type(e).__name__}
                out[os.path.basename(path) + " " + name + " " + iid] = r
    json.dump(out, sys.stdout, indent=0, sort_keys=True)
    print()


if __name__ == "__main__":
    what = sys.argv[2]
    if what == "pairs": pairs()
    elif what == "scripts": scripts()
    elif what == "all": all_scripts()
    elif what == "parsers": parsers()
    elif what == "specs": sys.stdout.write(specs(sys.argv[3]))
