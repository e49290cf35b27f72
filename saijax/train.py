"""``python -m saijax.train --config=configs/<name>.py --workdir=<dir>``: the main job (:mod:`saijax.cli.train`).

The command's entry point: self-play and training, resumed from the last
checkpoint in ``--workdir`` (the flags, several hosts and the final report
are :mod:`saijax.cli.train`'s; the run itself is :mod:`saijax.learn.pipeline`).
"""

from saijax.cli.train import run

if __name__ == "__main__":
    run()
