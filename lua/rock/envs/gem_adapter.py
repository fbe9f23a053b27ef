# gem_adapter.py: serves one installed GEM environment (gem.make(env_id),
# as ROCK does) as a rock process environment: JSON lines on stdin/stdout
# (docs/environments.md). rock runs it as `python3 -c <this file> ENV_ID`
# inside the sandbox (rock.envs.gem_spec), so nothing is uploaded; the
# image must have python3 and the gem package. What the environment prints
# goes to stderr: stdout carries the answers only.
import json
import sys

answers = sys.stdout
sys.stdout = sys.stderr


def answer(obj):
    answers.write(json.dumps(obj, default=str) + "\n")
    answers.flush()


try:
    import gem

    env = gem.make(sys.argv[1])
except Exception as e:  # noqa: BLE001 - said on stderr: the rocklet reports it with the exit status
    print("gem_adapter: cannot make %s: %s: %s" % (sys.argv[1:2], type(e).__name__, e), file=sys.stderr)
    sys.exit(3)

for line in sys.stdin:
    op = None
    try:
        req = json.loads(line)
        op = req.get("op") if isinstance(req, dict) else None
        if op == "reset":
            seed = req.get("seed")
            obs, info = env.reset(seed=seed) if seed is not None else env.reset()
            answer({"observation": obs, "info": info or {}})
        elif op == "step":
            obs, reward, terminated, truncated, info = env.step(req["action"])
            answer({"observation": obs, "reward": float(reward), "terminated": bool(terminated),
                    "truncated": bool(truncated), "info": info or {}})
        elif op == "close":
            env.close()
            answer({"closed": True})
            break
        else:
            answer({"error": "unknown op %r: want reset, step or close" % (op,)})
    except Exception as e:  # noqa: BLE001 - the environment's error is the call's answer
        answer({"error": "%s: %s" % (type(e).__name__, e)})
