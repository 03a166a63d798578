#!/usr/bin/env python3
"""The SGLang sample capturer (examples/python/sglang_capture_adapter.py, real torch) against the
C++ models it mirrors: upstream with sglang, miles with sglang-miles, fixed with sglang-fixed.

    sglang_adapter_agreement.py --r3fuzz BIN --cases DIR             replay DIR through all six
    sglang_adapter_agreement.py --r3fuzz BIN --campaign N --out DIR  r3fuzz run --profile sglang

Replay: for every case, the verdict, severity and signature must be equal, and so must every
detail line (the rows found and expected), except that a model's raised message may go on with
the SGLang source it cites: the sample raises the same torch or Python message without it.
A capacity verdict compares without the branch: the models publish the window of a buffer the
tensor overflowed, where SGLang's torch write raises at capture (branch "error").

Campaign: the findings' signatures and severities of the two must be the same sets. It needs
`run --profile sglang` (the SGLang case generator); until r3fuzz has it this exits 77, which
ctest reports as skipped.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTER = os.path.join(HERE, "..", "..", "examples", "python", "sglang_capture_adapter.py")
PAIRS = [("upstream", "sglang"), ("miles", "sglang-miles"), ("fixed", "sglang-fixed")]
LINE = re.compile(r"^(\S+\.json): (.*?): (.*?)(?: \((?:concrete|symbolic)\).*)?$")


def external(version):
    return f"external:{sys.executable} {os.path.normpath(ADAPTER)} --version {version}"


def replay_results(r3fuzz, cases):
    """{(file, impl): [verdict line without the impl, detail lines...]} from one replay of six impls."""
    impls = [x for version, model in PAIRS for x in (model, external(version))]
    cmd = [r3fuzz, "replay", cases, "--mode", "concrete"] + [f"--impl={i}" for i in impls]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"r3fuzz replay exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
    results, current = {}, None
    for line in run.stdout.splitlines():
        m = LINE.match(line)
        if m and not line.startswith(" "):
            f, impl, verdict = m.groups()
            current = (f, impl)
            results[current] = [verdict.replace(impl + "/", "/")]
        elif line.startswith("  ") and current:
            results[current].append(line.strip())
    return results


def same(model, ext):
    """Whether the model's lines and the sample's agree (see the module's docstring)."""
    if len(model) != len(ext):
        return False
    if model[0] != ext[0]:
        capacity = model[0].startswith("capacity ") and ext[0].startswith("capacity ")
        if not capacity or model[0].rsplit("/", 1)[0] != ext[0].rsplit("/", 1)[0]:
            return False
    return all(m == e or (m.startswith(e) and m[len(e):].startswith(" (")) for m, e in zip(model[1:], ext[1:]))


def check_replay(r3fuzz, cases):
    results = replay_results(r3fuzz, cases)
    files = sorted({f for f, _ in results})
    wanted = sorted(f for f in os.listdir(cases) if f.endswith(".json"))
    if len(files) != len(wanted):
        sys.exit(f"replayed {len(files)} of the {len(wanted)} cases in {cases}")
    bad, failing = [], 0
    for f in files:
        for version, model in PAIRS:
            m, e = results.get((f, model)), results.get((f, external(version)))
            if m is None or e is None or not same(m, e):
                bad.append(f"{f}: {model}: {m}\n    sample {version}: {e}")
            failing += m is not None and not m[0].startswith("pass")
    if bad:
        sys.exit("the sample and the model disagree:\n" + "\n".join(bad))
    if failing == 0:
        sys.exit("vacuous: the models pass every case")
    print(f"{len(files)} cases x {len(PAIRS)} versions agree ({failing} failing judgements)")


def check_campaign(r3fuzz, cases, out):
    profiles = subprocess.run([r3fuzz, "run", "--help"], capture_output=True, text=True).stdout
    if not re.search(r"--profile TEXT:\{[^}]*\bsglang\b", profiles):
        print("skipped: r3fuzz run has no --profile sglang yet (the SGLang case generator)")
        sys.exit(77)
    for version, model in PAIRS:
        ext = external(version)
        # torch's import alone can take over 30 s on a loaded CI machine: give the hello room.
        cmd = [r3fuzz, "run", "--profile", "sglang", f"--impl={ext}", f"--impl={model}", "--cases", str(cases),
               "--mode", "concrete", "--adapter-startup-timeout", "300", "--out", os.path.join(out, version)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)} exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
        # Findings read "  [1] IMPL/verdict/layout/branch (severity, N cases)".
        sig = r"(/[a-z_]+/[a-z_]+/[a-z_]+) \(([a-z]+),"
        mine = sorted(set(re.findall(r"\] " + re.escape(ext) + sig, run.stdout)))
        theirs = sorted(set(re.findall(r"\] " + re.escape(model) + sig, run.stdout)))
        if "adapter_error" in run.stdout or mine != theirs or (version != "fixed" and not theirs):
            sys.exit(f"{version}: signatures differ\nmodel:  {theirs}\nsample: {mine}\n{run.stdout}")
        print(f"{version}: {cases} cases, signatures agree: {theirs or 'none'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--r3fuzz", required=True)
    parser.add_argument("--cases", help="a directory of SGLang case files to replay")
    parser.add_argument("--campaign", type=int, help="cases of a generated campaign a version")
    parser.add_argument("--out", default="sglang-agreement")
    args = parser.parse_args()
    if args.cases:
        check_replay(args.r3fuzz, args.cases)
    if args.campaign:
        check_campaign(args.r3fuzz, args.campaign, args.out)


if __name__ == "__main__":
    main()
