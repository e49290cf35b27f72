"""One leg of a GPU run (issue 33), as one command on the device machine, and
its unpacking here (docs/performance.md, "The GPU lane").

On the GPU machine, from the repository root, with `.whl/` carried
(`make gpu-wheels` fills it here):

    python3 benchmarks/gpu_leg.py run go7_gpu --out $OUT      # or go9_gpu, go7_sharp_gpu

1. installs `.whl/*.whl` into /tmp/site (the one-line install of "The GPU
   lane"), unless mctx is already importable or ``--wheels=''``;
2. resumes: from the workdir (``runs/<run>``) if it already has a
   checkpoint (a second leg on a still-warm machine), else from a copy of
   the committed leg ``experiments/legs/<run>_run/leg/`` if there is one,
   else from scratch;
3. runs ``python -m saijax.train --config=configs/<run>.py
   --workdir=runs/<run> --config.time_limit_minutes=8`` with
   ``JAX_PLATFORMS=cuda`` (the run stops itself after the last generation
   it predicts to end within the limit), its log in ``$OUT/train.log``, and
   kills it at ``--hard_limit_s`` (540) should a generation overrun: its
   last checkpoint then is the leg's;
4. packs the leg's files (``pipeline.leg_files``: the newest checkpoint,
   ``metrics.jsonl``, ``config.json``) into ``$OUT/<run>_leg.tar``, in parts
   of at most 15 MiB if larger (what comes back from the device machine is
   at most 8 files of 16 MiB; with ``--leg_form=compact`` or
   ``compact_bfloat16`` the checkpoint is first made a compact leg by
   ``python -m saijax.compact_leg``: no optimizer state, about half the
   size or less), and the leg's SGFs into
   ``$OUT/<run>_sgf.tar.gz``; writes ``$OUT/leg.json`` (sizes, sha256,
   generations, this leg's evaluations and rates, the device and versions)
   and prints the leg's
   size. Four or five files in all.

Here, after the files came back:

    python benchmarks/gpu_leg.py unpack go7_gpu --from <files_at>

checks the parts against ``leg.json`` and replaces
``experiments/legs/<run>_run/leg/`` with the leg, ready to commit (only
the newest leg is committed; git keeps the older ones), and writes the
run's learning curve so far beside it, ``<run>_run/learning_curve.csv``
(every generation of the leg's ``metrics.jsonl``), which the README's
tables are made from.

A dry run on the CPU: ``--platform=cpu``, another ``--leg_dir`` and
``--workdir``, fewer ``--minutes``, and size overrides after ``--`` (passed
to saijax.train as they are), e.g.

    python benchmarks/gpu_leg.py run go7_gpu --out /tmp/o --platform=cpu --minutes=2 \\
        --leg_dir=/tmp/leg --workdir=/tmp/w -- --config.generations=1 \\
        --config.network.blocks=1 --config.network.filters=8 ...
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import provenance  # noqa: E402  (benchmarks/provenance.py: imports no JAX)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = ("go7_gpu", "go9_gpu", "go7_sharp_gpu")
LEG_FORMS = ("full", "compact", "compact_bfloat16")  # saijax.compact_leg
PART_BYTES = 15 * 2**20  # under the device tool's 16 MiB per returned file
WHEELS_SITE = "/tmp/site"


def committed_leg(run: str) -> str:
    """Where a run's newest leg is committed."""
    return os.path.join(REPO, "experiments", "legs", f"{run}_run", "leg")


def checkpoint_generations(workdir: str) -> list[int]:
    """The finished checkpoints' generations (orbax's unfinished saves are
    not bare numbers), sorted."""
    directory = os.path.join(workdir, "checkpoints")
    if not os.path.isdir(directory):
        return []
    return sorted(int(d) for d in os.listdir(directory) if d.isdigit())


def leg_paths(workdir: str, generation: int) -> list[str]:
    """What the next leg needs: the same list as `saijax.learn.pipeline.leg_files`
    (tests/gpu_configs_test.py checks they agree), written out here so that
    this process imports neither saijax nor JAX."""
    return [
        os.path.join(workdir, "checkpoints", str(generation)),
        os.path.join(workdir, "metrics.jsonl"),
        os.path.join(workdir, "config.json"),
    ]


def _bytes(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def _sha256(paths: list[str]) -> str:
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(2**20), b""):
                h.update(block)
    return h.hexdigest()


def _metrics(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


# ---------------------------------------------------------------------------
# On the device machine.


def install_wheels(wheels: str, log) -> str | None:
    """The GPU lane's one-line install: ``wheels/*.whl`` into /tmp/site.
    Returns the folder to put on PYTHONPATH, or None where nothing was
    installed (no wheels, or mctx already importable)."""
    files = sorted(glob.glob(os.path.join(wheels, "*.whl"))) if wheels else []
    if not files or importlib.util.find_spec("mctx") is not None:
        log(f"wheels: {'mctx already importable' if files else 'none'}, nothing installed")
        return None
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
    command += ["--no-cache-dir", "--upgrade", "--target", WHEELS_SITE, *files]
    subprocess.run(command, check=True)
    log(f"wheels: {len(files)} installed into {WHEELS_SITE}")
    return WHEELS_SITE


def prepare_workdir(workdir: str, leg_dir: str, log) -> int | None:
    """Resumes from the workdir's own checkpoint, else from a copy of the
    committed leg, else starts afresh. Returns the generation resumed after
    (None: from scratch)."""
    have = checkpoint_generations(workdir)
    if have:
        log(f"resuming from the workdir's own checkpoint {have[-1]} ({workdir})")
        return have[-1]
    if os.path.isdir(os.path.join(leg_dir, "checkpoints")):
        if os.path.exists(workdir):
            shutil.rmtree(workdir)  # no checkpoint: nothing of a run to keep
        shutil.copytree(leg_dir, workdir)
        have = checkpoint_generations(workdir)
        log(f"resuming from the committed leg {leg_dir}: checkpoint {have[-1] if have else 'none'}")
        return have[-1] if have else None
    log(f"no committed leg in {leg_dir}: starting {workdir} from scratch")
    return None


def train(args, extra_site: str | None, log) -> tuple[int, float]:
    """saijax.train for one leg; returns its exit status and wall seconds."""
    command = [sys.executable, "-m", "saijax.train", f"--config={os.path.join(REPO, 'configs', args.run + '.py')}"]
    command += [f"--workdir={args.workdir}", "--noprogress", f"--config.time_limit_minutes={args.minutes:g}"]
    command += [f"--config.compilation_cache_dir={args.cache_dir}", *args.train_flags]
    env = dict(os.environ, JAX_PLATFORMS=args.platform)
    path = [p for p in (extra_site, REPO, env.get("PYTHONPATH")) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    log("$ " + " ".join(command))
    t0 = time.time()
    with open(os.path.join(args.out, "train.log"), "w") as out:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            rc = process.wait(timeout=args.hard_limit_s)
        except subprocess.TimeoutExpired:
            log(f"the run overran --hard_limit_s={args.hard_limit_s:g}: stopping it; its last checkpoint is the leg")
            process.send_signal(signal.SIGTERM)
            try:
                rc = process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                rc = process.wait()
    return rc, time.time() - t0


def compact(args, extra_site: str | None, log) -> str:
    """The workdir's newest checkpoint as a compact leg (``python -m
    saijax.compact_leg``, on the CPU) in a new folder beside the workdir;
    returns the folder."""
    folder = args.workdir.rstrip(os.sep) + "_compact_leg"
    if os.path.exists(folder):
        shutil.rmtree(folder)
    dtype = "bfloat16" if args.leg_form == "compact_bfloat16" else "float32"
    command = [sys.executable, "-m", "saijax.compact_leg", args.workdir, folder, f"--weights_dtype={dtype}"]
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_site, REPO, env.get("PYTHONPATH")) if p)
    log("$ " + " ".join(command))
    subprocess.run(command, cwd=REPO, env=env, check=True)
    return folder


def pack(args, resumed_after: int | None, rc: int, wall: float, log, extra_site: str | None = None) -> dict:
    """The leg's files (``--leg_form``: as the run wrote them, or a compact
    leg) into ``<run>_leg.tar`` (parts of at most PART_BYTES), its SGFs into
    ``<run>_sgf.tar.gz``, and ``leg.json``."""
    generations = checkpoint_generations(args.workdir)
    if not generations:
        raise SystemExit(f"error: {args.workdir} has no checkpoint: nothing to keep (see {args.out}/train.log)")
    last = generations[-1]
    folder = args.workdir
    if args.leg_form != "full":
        folder = compact(args, extra_site, log)
    files = leg_paths(folder, last)
    tar_path = os.path.join(args.out, f"{args.run}_leg.tar")
    with tarfile.open(tar_path, "w") as tar:
        for path in files:
            if os.path.exists(path):
                tar.add(path, arcname=os.path.relpath(path, folder))
    parts = split(tar_path, PART_BYTES)
    leg_bytes = sum(_bytes(p) for p in files if os.path.exists(p))
    sgf = os.path.join(args.workdir, "sgf")
    if os.path.isdir(sgf):
        with tarfile.open(os.path.join(args.out, f"{args.run}_sgf.tar.gz"), "w:gz") as tar:
            tar.add(sgf, arcname="sgf")
    lines = [m for m in _metrics(files[1]) if resumed_after is None or m["generation"] > resumed_after]
    evaluations = sum(int(m.get("selfplay_evaluations", 0)) for m in lines)
    # The rate in steady state: this leg's generations after its first, whose
    # self-play includes compiling (none if the leg ran one generation).
    steady = lines[1:]
    steady_seconds = sum(float(m.get("selfplay_seconds", 0.0)) for m in steady)
    steady_evaluations = sum(int(m.get("selfplay_evaluations", 0)) for m in steady)
    rate = round(steady_evaluations / steady_seconds) if steady_seconds else None
    info = {
        "run": args.run,
        "exit_status": rc,
        "wall_seconds": round(wall, 1),
        "resumed_after": resumed_after,
        "generation": last,
        "generations_this_leg": len(lines),
        "first_generation_this_leg": lines[0]["generation"] if lines else None,
        "selfplay_evaluations_this_leg": evaluations,
        "selfplay_evaluations_per_second": rate,  # steady: after the leg's first generation
        "seconds_per_generation": round(sum(float(m["seconds"]) for m in steady) / len(steady), 2) if steady else None,
        "compile_seconds_this_leg": round(sum(float(m.get("compile_seconds", 0.0)) for m in lines), 1),
        "leg_form": args.leg_form,
        "leg_bytes": leg_bytes,
        "checkpoint_bytes": _bytes(files[0]),
        "parts": [os.path.basename(p) for p in parts],
        "sha256": _sha256(parts),
        # The device (nvidia-smi's) and the versions the leg ran with (the carried wheels' included).
        "provenance": provenance.describe(jax_devices=False, paths=[WHEELS_SITE]),
    }
    if lines:
        info["last_metrics"] = {
            k: lines[-1].get(k) for k in ("alpha_empty", "beta_empty", "first_move", "network", "seconds")
        }
    with open(os.path.join(args.out, "leg.json"), "w") as f:
        json.dump(info, f, indent=2)
    log(
        f"leg size: {leg_bytes / 1e6:.1f} MB (checkpoint {last}: {info['checkpoint_bytes'] / 1e6:.1f} MB), "
        f"packed in {len(parts)} file(s); {len(lines)} generations this leg, to {last}; "
        f"{evaluations / 1e6:.1f} M self-play evaluations "
        f"({f'{rate:,} a self-play second after its first generation' if rate else 'one generation: no steady rate'}), "
        f"wall {wall:.0f} s, exit {rc}"
    )
    return info


def split(path: str, part_bytes: int) -> list[str]:
    """``path`` as is if it fits ``part_bytes``, else parts ``path.000``,
    ``path.001``, ... (and ``path`` removed). Returns the files."""
    size = os.path.getsize(path)
    if size <= part_bytes:
        return [path]
    parts = []
    with open(path, "rb") as f:
        for i in range((size + part_bytes - 1) // part_bytes):
            part = f"{path}.{i:03d}"
            with open(part, "wb") as out:
                out.write(f.read(part_bytes))
            parts.append(part)
    os.remove(path)
    return parts


def run(args) -> int:
    if args.run not in RUNS:
        raise SystemExit(f"error: the run must be one of {RUNS}, got {args.run!r}")
    args.workdir = os.path.abspath(args.workdir or os.path.join(REPO, "runs", args.run))
    args.leg_dir = os.path.abspath(args.leg_dir or committed_leg(args.run))
    args.cache_dir = os.path.abspath(args.cache_dir or os.path.join(os.path.dirname(args.workdir), "compilation_cache"))
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()

    def log(message):
        print(f"[gpu_leg {time.time() - t0:6.1f}s] {message}", flush=True)

    extra_site = install_wheels(args.wheels, log)
    resumed_after = prepare_workdir(args.workdir, args.leg_dir, log)
    rc, wall = train(args, extra_site, log)
    with open(os.path.join(args.out, "train.log")) as f:
        tail = f.read().splitlines()[-25:]
    print("\n".join(tail), flush=True)
    pack(args, resumed_after, rc, wall, log, extra_site)
    log("done")
    return rc


# ---------------------------------------------------------------------------
# Here, after the files came back.


def unpack(args) -> int:
    """Replaces the committed leg with the one in ``args.source``."""
    with open(os.path.join(args.source, "leg.json")) as f:
        info = json.load(f)
    if info["run"] != args.run:
        raise SystemExit(f"error: {args.source} holds a leg of {info['run']}, not {args.run}")
    parts = [os.path.join(args.source, p) for p in info["parts"]]
    if _sha256(parts) != info["sha256"]:
        raise SystemExit(f"error: the parts in {args.source} do not match leg.json's sha256")
    leg_dir = os.path.abspath(args.leg_dir or committed_leg(args.run))
    os.makedirs(os.path.dirname(leg_dir), exist_ok=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(leg_dir)) as tmp:  # then a rename, not a copy
        joined = os.path.join(tmp, "leg.tar")
        with open(joined, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    shutil.copyfileobj(f, out)
        new = os.path.join(tmp, "leg")
        with tarfile.open(joined) as tar:
            tar.extractall(new, filter="data")
        generations = checkpoint_generations(new)
        missing = [n for n in ("metrics.jsonl", "config.json") if not os.path.exists(os.path.join(new, n))]
        if generations != [info["generation"]] or missing:
            raise SystemExit(f"error: the leg is incomplete: checkpoints {generations}, missing {missing}")
        if os.path.exists(leg_dir):
            shutil.rmtree(leg_dir)
        shutil.move(new, leg_dir)
    curve = write_curve(leg_dir)
    print(f"{leg_dir}: checkpoint {info['generation']}, {_bytes(leg_dir) / 1e6:.1f} MB; {curve}")
    return 0


CURVE_KEYS = (
    "alpha_empty",
    "beta_empty",
    # The data's komi curve and the opening (issue 43; empty in legs before them).
    "data_alpha",
    "data_beta",
    "data_beta_local",
    "first_move_centre_share",
    "resigned_row_share",
    "first_move",
    "score_error",
    "score_error_late",
    "beta_late",
    "avg_game_length",
    "games",
    "resignations",
    "false_resignation_rate",
    "selfplay_seconds",
    "train_seconds",
    "train_steps",
)


def write_curve(leg_dir: str) -> str:
    """The run's learning curve beside its leg (``<run>_run/learning_curve.csv``), from the leg's
    ``metrics.jsonl`` (every generation so far): ``experiments.lib.common.learning_curve``'s rows (the
    cumulative self-play evaluations in millions, the generations' own wall minutes) with
    ``CURVE_KEYS``; the README's tables are made from it (experiments/lib/readme_tables.py). Returns its
    path."""
    if REPO not in sys.path:  # run as a script from benchmarks/
        sys.path.insert(0, REPO)
    from experiments.lib import common

    metrics = {int(m["generation"]): m for m in _metrics(os.path.join(leg_dir, "metrics.jsonl"))}
    path = os.path.join(os.path.dirname(os.path.abspath(leg_dir)), "learning_curve.csv")
    return str(common.write_csv(path, common.learning_curve(metrics, CURVE_KEYS)))


def parse_args(argv=None) -> argparse.Namespace:
    """The command's flags; what follows ``--`` goes to saijax.train as it is
    (``train_flags``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    train_flags = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="on the device machine: one leg, its files packed into --out")
    r.add_argument("run", help=f"one of {RUNS} (configs/<run>.py)")
    r.add_argument("--out", default=os.environ.get("OUT", "gpu-leg"), help="where the files go ($OUT)")
    r.add_argument("--minutes", type=float, default=8.0, help="--config.time_limit_minutes")
    r.add_argument("--hard_limit_s", type=float, default=540.0, help="the run is stopped after this many seconds")
    r.add_argument("--platform", default="cuda", help="JAX_PLATFORMS for the run (cpu for a dry run)")
    r.add_argument("--workdir", default="", help="default runs/<run>")
    r.add_argument("--leg_dir", default="", help="the leg to resume from (default experiments/legs/<run>_run/leg)")
    r.add_argument("--cache_dir", default="", help="the compilation cache (default: beside the workdir)")
    r.add_argument("--wheels", default=os.path.join(REPO, ".whl"), help="wheels to install first ('' for none)")
    r.add_argument(
        "--leg_form",
        default="full",
        choices=LEG_FORMS,
        help="the leg as the run wrote it, or compact (no optimizer state: it restarts on resume; "
        "the weights in float32 or bfloat16), README 'Long runs in legs'",
    )
    r.epilog = "Flags after -- go to saijax.train as they are (size overrides for a dry run)."
    u = sub.add_parser("unpack", help="here: the files that came back into the committed leg folder")
    u.add_argument("run", help=f"one of {RUNS}")
    u.add_argument("--from", dest="source", required=True, help="the folder the files came back to")
    u.add_argument("--leg_dir", default="", help="default experiments/legs/<run>_run/leg")
    args = p.parse_args(argv)
    args.train_flags = train_flags
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    return run(args) if args.command == "run" else unpack(args)


if __name__ == "__main__":
    raise SystemExit(main())
