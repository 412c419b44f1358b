#!/usr/bin/env python3
"""The CI templates of examples/ci/ (docs/scenario-runs.md, "In CI"),
read with python3-yaml as a CI would read them, and what they mean:

  check_ci.py static GITHUB_YML GITLAB_YML
      YAML that parses (a key given twice is an error here, as it is
      silently the last one in most readers); the shard jobs cover shards
      1..N exactly once (GitHub: the matrix; GitLab: parallel: N with
      CI_NODE_INDEX/CI_NODE_TOTAL), each into a directory of its own that
      it keeps as an artifact; the merge job needs the shard job, joins
      what the shards kept, and compares against a baseline.

  check_ci.py mutants GITHUB_YML GITLAB_YML
      the static check fails, for the right reason, on copies of the
      templates with one mistake each (a shard twice, a wrong shard spec,
      the merge not needing the shards, a key twice, an artifact that is
      not the shard's directory, ...): the check can fail.

  check_ci.py run GITHUB_YML GITLAB_YML KENAF_SIM_RUN SWEEP PROGRAM
      every kenaf-sim-run command of the templates run for real, in the
      order a pipeline runs them: the N shards (the matrix's values and
      CI_NODE_INDEX substituted), their directories carried to the merge
      job as the template's artifact steps say, the merge, and the compare
      against a baseline (the merged directory itself: no regression). So a
      template that names an option kenaf-sim-run does not take, a shard
      spec it refuses, or paths that do not meet fails here. What is
      around those commands (apt-get, make, gh, curl) is the CI's and is
      not run.

Exit status 0, 1 with the reasons, 77 (skipped) without python3-yaml.
"""
import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP: no python3-yaml (tools/install-deps installs it)")
    sys.exit(77)

problems = []


def fail(msg):
    problems.append(msg)


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader refusing a mapping key given twice."""


def _mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, "key %r given twice" % (key,), key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load(path):
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=UniqueKeyLoader)


def logical_lines(script):
    """The shell lines of a script, backslash continuations joined."""
    return [l.strip() for l in script.replace("\\\n", " ").split("\n") if l.strip()]


def kenaf_commands(script):
    """The kenaf-sim-run commands of a script, each as one line."""
    return [l for l in logical_lines(script) if l.startswith("kenaf-sim-run ")]


def has_opt(cmd, opt):
    return opt in shlex.split(cmd)


def merge_and_compare(path, job, script):
    """The merge job's one --merge and one --compare command, or None."""
    cmds = kenaf_commands(script)
    merges = [c for c in cmds if has_opt(c, "--merge")]
    compares = [c for c in cmds if has_opt(c, "--compare")]
    if len(merges) != 1 or len(compares) != 1:
        fail("%s: job %s: want one --merge and one --compare, found %d and %d"
             % (path, job, len(merges), len(compares)))
        return None
    return merges[0], compares[0]


# ---- GitHub Actions ----------------------------------------------------

def gh_steps_running(job):
    return [s for s in job.get("steps", []) if "run" in s]


def gh_find(wf):
    """(shard job name, shard job, merge job name, merge job)."""
    jobs = wf.get("jobs") or {}
    shard = merge = None
    for name, job in jobs.items():
        text = "\n".join(s["run"] for s in gh_steps_running(job))
        if "--sweep" in text:
            shard = (name, job)
        if "--merge" in text:
            merge = (name, job)
    return shard, merge


def gh_expr(text, shard, env):
    """Substitutes ${{ matrix.shard }} and ${{ env.X }}; fails on others."""
    def sub(m):
        e = m.group(1).strip()
        if e == "matrix.shard":
            return str(shard)
        if e.startswith("env.") and e[4:] in env:
            return str(env[e[4:]])
        raise KeyError(e)
    return re.sub(r"\$\{\{(.*?)\}\}", sub, text)


def check_github(path):
    wf = load(path)
    # PyYAML reads the key `on` as the boolean true (YAML 1.1); GitHub as "on"
    if "on" not in wf and True not in wf:
        fail("%s: no `on:` (what triggers the workflow)" % path)
    env = wf.get("env") or {}
    (shard, merge) = gh_find(wf)
    if not shard or not merge:
        fail("%s: no job running kenaf-sim-run --sweep and one running --merge" % path)
        return None
    sname, sjob = shard
    mname, mjob = merge
    values = (((sjob.get("strategy") or {}).get("matrix") or {}).get("shard"))
    if not isinstance(values, list) or not values:
        fail("%s: job %s has no matrix.shard list" % (path, sname))
        return None
    n = len(values)
    if sorted(values) != list(range(1, n + 1)):
        fail("%s: matrix.shard %r is not 1..%d, each once" % (path, values, n))
    cmds = [c for s in gh_steps_running(sjob) for c in kenaf_commands(s["run"])]
    sweeps = [c for c in cmds if has_opt(c, "--sweep")]
    if len(sweeps) != 1:
        fail("%s: job %s: want one kenaf-sim-run --sweep, found %d" % (path, sname, len(sweeps)))
        return None
    try:
        per_shard = [gh_expr(sweeps[0], k, env) for k in range(1, n + 1)]
    except KeyError as e:
        fail("%s: %s: an expression this check does not know: %s" % (path, sname, e))
        return None
    outs = []
    for k, c in enumerate(per_shard, 1):
        a = shlex.split(c)
        if "--shard" not in a or a[a.index("--shard") + 1] != "%d/%d" % (k, n):
            fail("%s: shard %d of %d runs %r" % (path, k, n, c))
        if "--out" not in a:
            fail("%s: shard %d has no --out" % (path, k))
            continue
        outs.append(a[a.index("--out") + 1])
    if len(set(outs)) != n:
        fail("%s: the shards' --out are not one directory each: %r" % (path, outs))
    uploads = [s for s in sjob["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    if len(uploads) != 1:
        fail("%s: job %s: want one upload-artifact step" % (path, sname))
        return None
    up = uploads[0].get("with") or {}
    artifacts = {}
    for k in range(1, n + 1):
        name, upath = gh_expr(str(up.get("name")), k, env), gh_expr(str(up.get("path")), k, env)
        if upath != outs[k - 1]:
            fail("%s: shard %d uploads %s, writes %s" % (path, k, upath, outs[k - 1]))
        artifacts[name] = upath
    if len(artifacts) != n:
        fail("%s: the shards' artifacts are not one name each: %r" % (path, sorted(artifacts)))
    needs = mjob.get("needs")
    needs = [needs] if isinstance(needs, str) else (needs or [])
    if sname not in needs:
        fail("%s: job %s does not need %s (needs: %r)" % (path, mname, sname, needs))
    downloads = [s for s in mjob.get("steps", [])
                 if str(s.get("uses", "")).startswith("actions/download-artifact")]
    if len(downloads) != 1:
        fail("%s: job %s: want one download-artifact step" % (path, mname))
        return None
    down = downloads[0].get("with") or {}
    pattern = str(down.get("pattern", ""))
    dpath = str(down.get("path", "."))
    # download-artifact@v4: each artifact matching the pattern lands in
    # PATH/NAME (PATH itself with merge-multiple)
    got = [a for a in artifacts if fnmatch.fnmatchcase(a, pattern)]
    if sorted(got) != sorted(artifacts):
        fail("%s: the merge job downloads %r, the shards upload %r" % (path, pattern, sorted(artifacts)))
    if down.get("merge-multiple"):
        fail("%s: merge-multiple would mix the shards' directories into one" % path)
    carried = {os.path.join(dpath, a): artifacts[a] for a in artifacts}
    mc = merge_and_compare(path, mname, "\n".join(s["run"] for s in gh_steps_running(mjob)))
    if not mc:
        return None
    return {"env": env, "shards": per_shard, "carried": carried, "merge": mc[0], "compare": mc[1]}


# ---- GitLab CI ---------------------------------------------------------

def gl_script(job, extends_from):
    text = []
    base = extends_from.get(job.get("extends")) if isinstance(job.get("extends"), str) else None
    for part in ("before_script", "script"):
        items = job.get(part, base.get(part) if base else None) or []
        text += [str(i) for i in items]
    return "\n".join(text)


def check_gitlab(path):
    ci = load(path)
    jobs = {k: v for k, v in ci.items() if isinstance(v, dict) and ("script" in v or "extends" in v)}
    hidden = {k: v for k, v in ci.items() if k.startswith(".") and isinstance(v, dict)}
    stages = ci.get("stages") or ["build", "test", "deploy"]
    shard = merge = None
    for name, job in jobs.items():
        if name.startswith("."):
            continue
        s = gl_script(job, hidden)
        if "--sweep" in s:
            shard = (name, job)
        if "--merge" in s:
            merge = (name, job)
    if not shard or not merge:
        fail("%s: no job running kenaf-sim-run --sweep and one running --merge" % path)
        return None
    sname, sjob = shard
    mname, mjob = merge
    n = sjob.get("parallel")
    if not isinstance(n, int) or n < 2:
        fail("%s: job %s: parallel: %r, want a number of shards >= 2" % (path, sname, n))
        return None
    cmds = [c for c in kenaf_commands(gl_script(sjob, hidden)) if has_opt(c, "--sweep")]
    if len(cmds) != 1:
        fail("%s: job %s: want one kenaf-sim-run --sweep, found %d" % (path, sname, len(cmds)))
        return None
    a = shlex.split(cmds[0])
    if "--shard" not in a or a[a.index("--shard") + 1] != "$CI_NODE_INDEX/$CI_NODE_TOTAL":
        fail("%s: job %s's --shard is not $CI_NODE_INDEX/$CI_NODE_TOTAL: %r" % (path, sname, cmds[0]))
    out = a[a.index("--out") + 1] if "--out" in a else None
    if not out or "$CI_NODE_INDEX" not in out:
        fail("%s: job %s's --out is not one directory per shard: %r" % (path, sname, out))
    kept = ((sjob.get("artifacts") or {}).get("paths")) or []
    if out not in kept:
        fail("%s: job %s keeps %r, writes %r" % (path, sname, kept, out))
    needs = mjob.get("needs") or []
    needs = [x["job"] if isinstance(x, dict) else x for x in needs]
    if sname not in needs:
        fail("%s: job %s does not need %s (needs: %r)" % (path, mname, sname, needs))
    if stages.index(mjob.get("stage", "test")) <= stages.index(sjob.get("stage", "test")):
        fail("%s: job %s's stage is not after %s's" % (path, mname, sname))
    mc = merge_and_compare(path, mname, gl_script(mjob, hidden))
    if not mc:
        return None
    env = {k: str(v) for k, v in (ci.get("variables") or {}).items()}
    shards = [cmds[0].replace("$CI_NODE_INDEX", str(k)).replace("$CI_NODE_TOTAL", str(n))
              for k in range(1, n + 1)]
    return {"env": env, "shards": shards, "carried": {}, "merge": mc[0], "compare": mc[1]}


# ---- running the commands ----------------------------------------------

def run_cmd(cmd, cwd, env, want, what):
    p = subprocess.run(["sh", "-ec", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode != want:
        fail("%s: `%s` exit %d, want %d:\n%s" % (what, cmd, p.returncode, want, p.stdout[-3000:]))
        return False
    return True


def baseline_of(compare):
    """The OLD directory of `kenaf-sim-run --compare OLD NEW`."""
    a = shlex.split(compare)
    i = a.index("--compare")
    return a[i + 1], a[i + 2]


def run_template(what, plan, run, sweep, program, tmp):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in plan["env"].items()})
    env["SWEEP"] = sweep
    env["PATH"] = os.path.dirname(os.path.abspath(run)) + os.pathsep + env.get("PATH", "")
    shard_ws = os.path.join(tmp, what, "shards")
    merge_ws = os.path.join(tmp, what, "merge") if plan["carried"] else shard_ws
    for ws in {shard_ws, merge_ws}:
        os.makedirs(ws)
        os.symlink(program, os.path.join(ws, "controller"))
    for i, cmd in enumerate(plan["shards"], 1):
        if not run_cmd(cmd, shard_ws, env, 0, "%s shard %d" % (what, i)):
            return
    for dst, src in plan["carried"].items():
        shutil.copytree(os.path.join(shard_ws, src), os.path.join(merge_ws, dst))
    if not run_cmd(plan["merge"], merge_ws, env, 0, "%s merge" % what):
        return
    old, new = baseline_of(plan["compare"])
    shutil.copytree(os.path.join(merge_ws, new), os.path.join(merge_ws, old))
    run_cmd(plan["compare"], merge_ws, env, 0, "%s compare with itself" % what)
    for f in ("sweep.json", "results.json", "report.json"):
        if not os.path.isfile(os.path.join(merge_ws, new, f)):
            fail("%s: the merge wrote no %s in %s" % (what, f, new))


# (template, text replaced, by, what the failure says)
MUTANTS = [
    ("github", "shard: [1, 2, 3, 4]", "shard: [1, 2, 2, 4]", "is not 1..4"),
    ("github", "shard: [1, 2, 3, 4]", "shard: [1, 2, 3]", "shard 3 of 3 runs"),
    ("github", "  SHARDS: 4", "  SHARDS: 5", "shard 1 of 4 runs"),
    ("github", "needs: shard", "needs: build", "does not need shard"),
    ("github", "path: sweep-out/shard-${{ matrix.shard }}", "path: sweep-out", "uploads sweep-out"),
    ("github", "pattern: sweep-shard-*", "pattern: shard-*", "the merge job downloads"),
    ("github", "  SHARDS: 4", "  SHARDS: 4\n  SHARDS: 4", "given twice"),
    ("github", "--out sweep-out/shard-${{ matrix.shard }}", "--out sweep-out/shard", "one directory each"),
    ("github", "kenaf-sim-run --compare", "echo", "want one --merge and one --compare"),
    ("gitlab", "parallel: 4", "parallel: 1", "want a number of shards"),
    ("gitlab", '"$CI_NODE_INDEX/$CI_NODE_TOTAL"', '"$CI_NODE_INDEX/4"', "is not $CI_NODE_INDEX/$CI_NODE_TOTAL"),
    ("gitlab", "      - sweep-out/shard-$CI_NODE_INDEX", "      - sweep-out", "keeps"),
    ("gitlab", "    - sweep-shard\n", "    - build\n", "does not need sweep-shard"),
    ("gitlab", "  stage: merge", "  stage: sweep", "stage is not after"),
    ("gitlab", "stages:", "image: debian:11\nstages:", "given twice"),
]


def mutants(gh, gl):
    paths = {"github": gh, "gitlab": gl}
    checks = {"github": check_github, "gitlab": check_gitlab}
    tmp = tempfile.mkdtemp(prefix="kn-ci-mutants-")
    caught = 0
    try:
        for what, old, new, why in MUTANTS:
            with open(paths[what], encoding="utf-8") as f:
                text = f.read()
            if old not in text:
                fail("mutant %s %r: the template no longer has %r" % (what, new, old))
                continue
            m = os.path.join(tmp, "m.yml")
            with open(m, "w", encoding="utf-8") as f:
                f.write(text.replace(old, new, 1))
            before = len(problems)
            try:
                checks[what](m)
            except (OSError, yaml.YAMLError) as e:
                fail("%s: %s" % (m, e))
            said = problems[before:]
            del problems[before:]
            if not any(why in p for p in said):
                fail("mutant %s (%r -> %r): want a failure saying %r, got %r" % (what, old, new, why, said))
            else:
                caught += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return caught


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("static", "mutants", "run") or \
            (sys.argv[1] == "run" and len(sys.argv) != 7):
        print(__doc__, file=sys.stderr)
        return 2
    mode, gh, gl = sys.argv[1:4]
    if mode == "mutants":
        caught = mutants(gh, gl)
        for p in problems:
            print("FAIL: %s" % p)
        print("ci: %d of %d broken templates refused" % (caught, len(MUTANTS)))
        return 1 if problems else 0
    plans = {}
    for what, path, check in (("github", gh, check_github), ("gitlab", gl, check_gitlab)):
        try:
            plans[what] = check(path)
        except (OSError, yaml.YAMLError) as e:
            fail("%s: %s" % (path, e))
    if mode == "run" and not problems:
        run, sweep, program = (os.path.abspath(x) for x in sys.argv[4:7])
        tmp = tempfile.mkdtemp(prefix="kn-ci-")
        try:
            for what, plan in plans.items():
                run_template(what, plan, run, sweep, program, tmp)
        finally:
            if os.environ.get("KN_KEEP_TMP") == "1":
                print("kept %s" % tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)
    for p in problems:
        print("FAIL: %s" % p)
    if not problems:
        for what, plan in plans.items():
            print("ci: %s: %d shards, merge, compare%s" % (what, len(plan["shards"]),
                                                         ", run" if mode == "run" else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
