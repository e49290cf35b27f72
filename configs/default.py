"""python -m saijax.train --config=configs/default.py --workdir=/tmp/sai9

SAI on 9×9, close to the papers' first run, sized for a GPU.

Self-play follows the sharp-value recipe of `configs/go7_sharp.py`, scaled to
9×9: every move a full PUCT search (no playout caps), SAI's opening of 25
random moves (T = 0.5, only moves searched more than twice and not losing,
taken back if they would resign) with Dirichlet noise on those moves only, the
search's most-visited move after them, and 32 training samples per new row;
komi 7.5. On 7×7 these are the rules that took the value from flat to SAI's
sharp one; on 9×9 only a small CPU run has checked them (docs/design.md §6,
"The sharp recipe on 9×9").

Every field of the run config is defined and documented here; the other
configs start from this one and override only what differs. Figures come from
docs/design.md §10 (the 9×9 papers and SAI's code); departures are marked
"Departure:" with the reason. Fields where 0 means "the default for this
board size" are resolved by helpers in `saijax.learn.config`.

Schedules are tuples keyed by generation: `((generation, ...), ...)`, sorted,
starting at generation 0; the last entry whose generation is <= g applies at
generation g. An empty visits / network schedule means "use
search.num_simulations / network.blocks, network.filters throughout".
"""

import ml_collections

from saijax.core import search


def get_config() -> ml_collections.ConfigDict:
    """The 9×9 paper-like run."""
    config = ml_collections.ConfigDict()

    config.board_size = 9  # N, 2..19 (static: one compile per size).
    config.seed = 0  # Root of every PRNG key of the run.
    # Generations to run (each: self-play, train, checkpoint). The paper's
    # first run had 690.
    config.generations = 690
    # Checkpoints: the last 3 generations are kept, and every generation
    # divisible by this (0: none), for Elo curves and the model zoo.
    config.keep_checkpoint_every = 10
    # Call jax.distributed.initialize() before anything else (several hosts).
    config.multihost = False
    # Move cap, passes included; 0 means 2·N² (162 on 9×9, as autogtp).
    config.max_moves = 0
    # Wall-clock limit of this process in minutes (0: none), counted from
    # its start (imports, compilation and restoring included). The run is
    # then one leg: after each generation it predicts the next one's time
    # and stops, checkpoint written, when that would end past the limit,
    # printing what to keep for the next leg (README, "Long runs in legs").
    config.time_limit_minutes = 0.0
    # JAX's persistent compilation cache: each compiled program is stored
    # in compilation_cache_dir (below) and a
    # later launch of the same config on the same kind of machine loads it
    # instead of compiling again (docs/performance.md).
    config.compilation_cache = True
    config.compilation_cache_dir = ""  # "": <workdir>/compilation_cache

    # --- Network (docs/design.md §3). Shape at generation 0 when schedules.network
    # is empty; otherwise the schedule decides.
    config.network = ml_collections.ConfigDict()
    config.network.blocks = 4  # Residual blocks (run 1 started at 4×128).
    config.network.filters = 128  # Trunk channels.
    # 'sai' (α/β sigmoid head), 'winrate' (AlphaZero tanh, + colour plane) or
    # 'score' (Leela Zero Score linear margin / N², + colour plane).
    config.network.value_head = "sai"
    # β = exp(out)·beta_scale; 0.0 means 10/N² (SAI's engine).
    config.network.beta_scale = 0.0
    # KataGo's ownership auxiliary head (Wu 2019; docs/design.md §3): a
    # per-point tanh predicting the final Tromp–Taylor owner of each point
    # from the mover's view. Trained by training.ownership_weight; self-play
    # records the targets only when it is on. Off: SAI's net.
    config.network.ownership_head = False
    # KataGo's global pooling (Wu 2019 §4.1; docs/design.md §3): every third
    # residual block (the last one in a net of 1 or 2 blocks) adds a bias from
    # the per-channel mean and max over the board of extra pooled channels,
    # and the policy and value heads also read the trunk's mean/max pooled
    # features. New parameters, all starting at zero in the blocks and policy
    # heads, so a fresh net plays as one without pooling. Off: SAI's net.
    config.network.global_pooling = False
    # KataGo's opponent-reply policy head (Wu 2019 §4.2): a second policy head
    # predicting the opponent's reply (target: the next position's policy
    # target). Trained by training.opponent_policy_weight; self-play records
    # the targets only when it is on; search ignores it. Off: SAI's net.
    config.network.opponent_policy_head = False
    # Compute precision of the net in self-play, gating and the empty-board
    # metrics: 'float32' or 'bfloat16' (trunk and hidden layers in bfloat16,
    # outputs float32; what a GPU or TPU runs fastest, see docs/performance.md).
    # Training is float32 either way.
    config.precision = "float32"

    # --- Search (docs/design.md §4, §5). A field set from search.SearchConfig
    # or search.Agent takes that class's default, declared there once.
    config.search = ml_collections.ConfigDict()
    # 'puct' (mctx.muzero_policy, the papers' engine) or 'gumbel'
    # (mctx.gumbel_muzero_policy, better at low simulation counts).
    config.search.algorithm = "puct"
    # Simulations per move when schedules.visits is empty.
    config.search.num_simulations = 100
    # Gumbel only: actions sampled at the root (mctx's m).
    config.search.max_num_considered_actions = search.SearchConfig.max_num_considered_actions
    # Gumbel only: noise scale at the root.
    config.search.gumbel_scale = search.SearchConfig.gumbel_scale
    # PUCT exploration constant (SAI's engine).
    config.search.c_puct = search.SearchConfig.c_puct
    # Root Dirichlet α for PUCT self-play; 0.0 means 0.03·361/N² (0.134 on
    # 9×9, SAI's engine).
    config.search.dirichlet_alpha = search.SearchConfig.dirichlet_alpha
    # Weight ε of the root Dirichlet noise in PUCT self-play; 0 disables.
    config.search.dirichlet_fraction = 0.25
    # The λ/μ agent (docs/design.md §4), 1 >= λ >= μ >= 0. Self-play used small
    # values; λ = μ = 0 is the plain win-probability agent, saijax's default
    # everywhere (players too: saijax.cli.player; SAI's engine defaulted to
    # λ = 0.5 for matches).
    config.search.lambda_ = search.Agent.lambda_  # λ, upper end of the bonus interval.
    config.search.mu = search.Agent.mu  # μ, lower end.
    # Variable agent: (λ, μ) apply only while the root's win probability
    # τ(k) is at least this; below it the agent falls back to (0, 0). 0:
    # always, the players' default too. It only matters when λ > 0, and a
    # run that asks for λ > 0 sets it (SAI's papers tried 0.5 and 0.7).
    config.search.threshold = search.Agent.threshold
    # β of a terminal leaf (two passes), whose α is the exact board margin.
    config.search.beta_terminal = search.SearchConfig.beta_terminal
    # PUCT first-play urgency (Leela Zero/SAI): an unvisited child is valued
    # at the parent's win rate minus fpu_reduction·sqrt(visited prior mass).
    config.search.fpu_reduction = search.SearchConfig.fpu_reduction
    # The FPU reduction at a self-play root with Dirichlet noise: SAI's and
    # Leela Zero's engines use 0 there (the noise is there to explore); with
    # fpu_reduction instead, a few PUCT simulations all go to the prior's
    # favourite and self-play sharpens whatever the net prefers.
    config.search.noisy_root_fpu_reduction = search.SearchConfig.noisy_root_fpu_reduction
    # PUCT only: at a node whose last move was a pass, the answering pass's
    # prior is raised by this (SAI's engine, 0.2 since 2019), so a search
    # that tries a first pass soon sees the answer that ends the game; 0 is
    # plain PUCT (docs/design.md §5).
    config.search.pass_answer_prior = 0.2
    # When the root may pass: 'search' (as any move: SAI's and Leela Zero's
    # self-play, autogtp's --dumbpass) or 'leela' (Leela Zero's and SAI's
    # engine rules outside that mode: never a pass that loses at once on
    # the Tromp–Taylor count, since the opponent may answer with a pass;
    # otherwise only with few moves left, a win rate above 0.8, or to answer
    # a pass while ahead; where refused, the pass is not a root child and
    # gets no policy target). Departure: 'leela'. With 'search', 8–32 PUCT
    # simulations of a young net, whose values are still flat, made passes
    # look as good as moves, and 9×9 self-play collapsed into short
    # pass-ended games (docs/design.md §6); SAI's 100+ visits did not need it.
    config.search.root_pass_rule = "leela"
    # How leaves are valued: 'sigmoid' (λ/μ value from α, β; sai and winrate
    # heads) or 'score' (LZS: expected margin / N²; score head).
    config.search.value_mode = search.SearchConfig.value_mode
    # How a simulation finds the ancestors of the node it expands (superko,
    # backward pass): 'parents' (a loop up the tree: least work, the CPU's
    # choice), 'path' (the descent's record, no loop: for a GPU or TPU, where
    # a loop iteration costs launches and a wait) or 'auto' (by the backend).
    # The games are the same either way (docs/design.md §5).
    config.search.walk = search.SearchConfig.walk

    # --- Self-play (docs/design.md §6).
    config.selfplay = ml_collections.ConfigDict()
    # B, game slots advanced in lockstep; divisible by the device count.
    config.selfplay.batch_size = 256
    config.selfplay.games_per_generation = 2000  # G, finished games (§3.1).
    # Moves per jitted lax.scan chunk (control returns to Python between
    # chunks to collect finished games and show progress).
    config.selfplay.chunk_moves = 16
    # 'sample': komi of complete games drawn from the current net's
    # empty-board sigmoid read as a CDF (SAI); 'fixed': always `komi`.
    config.selfplay.komi_mode = "sample"
    config.selfplay.komi = 7.5  # Black's komi in 'fixed' mode (and matches); SAI's 9×9 matches.
    # Temperature of the sampled komi's logistic distribution (scale 1/β·T).
    config.selfplay.komi_temperature = 1.0
    # 'sample' mode: this share of complete games is played at `komi`
    # instead (SAI's server: 30% at the board's komi, keeping data where the
    # game's decision is however the net's α wanders).
    config.selfplay.fixed_komi_share = 0.0
    # Probability that a position queues a branch (paper 0.02; the server
    # used 0.025 with at most 3 branches per game).
    config.selfplay.branch_prob = 0.02
    # Branches held in the on-device queue; extra branches are dropped.
    config.selfplay.branch_queue_capacity = 1024
    # Complete games per branch at refill: 2 gives the paper's 2:1 ratio.
    config.selfplay.games_per_branch = 2
    # At most this many branches per game (SAI's server: 3; 0 = no cap).
    config.selfplay.max_branches_per_game = 3
    # R, opening moves (counted from the empty board, also in branches)
    # sampled ∝ visits^(1/T) (extended paper §3.4).
    config.selfplay.random_moves = 25
    # T for those moves. The paper: 1 "or less than 1"; the sharp recipe
    # (configs/go7_sharp.py): 0.5.
    config.selfplay.random_temperature = 0.5
    # Which moves those may be (SAI's engine, after Leela Zero): only moves
    # with more than random_min_visits visits (LZ's --randomvisits, 1) and
    # a value above random_losing_threshold (SAI's 5%) and the resign
    # threshold; none: the best move. A move seen once, however bad its
    # evaluation, is not played at random (a first pass among them: the
    # 9×9 collapse, docs/design.md §6). 0 and 0: every visited move.
    config.selfplay.random_min_visits = 2  # more than this many visits (go7_sharp.py's 2)
    config.selfplay.random_losing_threshold = 0.05  # and a value above this
    # SAI's take-back: a random move whose value would make its player
    # resign (the resign rule, in a game that may resign) is replaced by the
    # best move. Like SAI's, it cannot fire before move N²/4.
    config.selfplay.random_takeback = True
    # With playout caps: random opening moves only from full searches (SAI
    # drew them from its full search). A slot still in its first
    # random_moves moves does not move on a cheap search; it waits for the
    # next full one (its cheap search is spent, and counted).
    config.selfplay.random_full_search_only = False
    # What those moves are drawn from: 'visits' (the root's visit counts,
    # SAI) or 'improved' (the search's policy target; the same thing for
    # PUCT). Gumbel's sequential halving at a few simulations spreads its
    # visits nearly evenly over the considered actions, so ∝ visits is
    # almost a uniform draw among up to 16 candidates; the improved policy
    # softmax(logits + σ(q̂)) weighs them by their values. On 7×7 it did not
    # help (the ablation's 'opening' arm in experiments/README.md: weaker,
    # fewer distinct openings), so go7.py keeps 'visits'; the sharp recipe
    # (PUCT) draws from its search's policy target.
    config.selfplay.opening_policy = "improved"
    # Root search noise (Gumbel's gumbel_scale, PUCT's Dirichlet fraction) on
    # the first this-many moves of a game only (counted from the empty board,
    # also in branches); after them self-play plays the search's best move,
    # as SAI did after its randomised opening. -1: noise on every move.
    # Gumbel's policy target does not depend on the noise. The sharp recipe
    # (configs/go7_sharp.py): noise on the random opening moves only, since
    # on 7×7 noise at every root decided the games near the fair komi in both
    # directions and kept the value flat (experiments/README.md, "SAI's sharp
    # value on 7×7", round 16). Leela Zero's and SAI's servers ran -1.
    config.selfplay.noise_moves = 25  # = random_moves
    # Playout cap randomisation (KataGo, Wu 2019 §3.1): each move the whole
    # batch searches fully (the visits schedule) with probability
    # full_search_prob, else with fast_simulations and no root noise; only
    # full searches give policy targets, every position a value target.
    # fast_simulations = 0 (or full_search_prob = 1): every search is full.
    config.selfplay.fast_simulations = 0  # simulations of a cheap search (0: off)
    config.selfplay.full_search_prob = 1.0  # probability of a full search (KataGo: 0.25)
    # A sampled move whose value (on the [0, 1] win-probability scale) is
    # below the reference by more than this is a blunder; positions before
    # a game's last blunder are not trained on. The 9×9 paper tried several
    # definitions without giving one; 0.15 is our choice. SAI's engine
    # (--blunderthr; off by default) ran 0.05 on its 19×19 server.
    config.selfplay.blunder_threshold = 0.15
    # The reference of a blunder: 'best_child', the best visited child's
    # value; or 'search_move', the value of the move the search plays (SAI's
    # engine: its first child, the most visited).
    config.selfplay.blunder_reference = "best_child"
    # Blunders a game may play: each game draws Poisson(this mean); once
    # spent, its random moves are drawn among non-blunders only. SAI's
    # engine: ln 4 = 1.386 (a quarter of games allow none). < 0: no limit.
    config.selfplay.blunders_allowed_mean = -1.0
    # Resign when the best child's agent value is below this (after N²/4
    # moves); < 0 disables resignation. Server default 5% to 10%.
    config.selfplay.resign_threshold = 0.05
    # Fraction of games that may not resign (measures false resignations).
    config.selfplay.no_resign_fraction = 0.1
    # LZS pass rule: pass only if no move's expected score beats the current
    # Tromp–Taylor score.
    config.selfplay.lzs_pass_rule = False
    # Games per generation written as SGF for inspection (0: none).
    config.selfplay.sgf_games_per_generation = 16

    # --- Schedules keyed by generation (papers §3.3).
    config.schedules = ml_collections.ConfigDict()
    # [generation, simulations]. Run 1 rose from 100 to 850 visits; the
    # paper gives only the endpoints, so the intermediate steps are ours.
    config.schedules.visits = ((0, 100), (50, 200), (100, 400), (200, 850))
    # [generation, blocks, filters]: a bigger net takes over at each step
    # (training.growth says how it starts). Run 1 went from 4×128 to 8×160
    # after the visits had peaked; the generations are ours.
    config.schedules.network = ((0, 4, 128), (300, 6, 128), (450, 8, 160))
    # [generation, w]: train on the last w generations; 4 to 20, short while
    # the nets change fast (§3.1).
    config.schedules.window = ((0, 4), (30, 8), (100, 12), (200, 20))

    # --- Training (docs/design.md §7).
    config.training = ml_collections.ConfigDict()
    config.training.steps_per_generation = 4000  # S (paper 4,000–10,000).
    # Positions per step, sharded over the devices (divisible by their
    # count).
    config.training.batch_size = 512
    config.training.optimizer = "sgd"  # 'sgd' (+ momentum) or 'adam'.
    # How a net grown by schedules.network starts. 'retrain' (SAI, Leela
    # Zero): from scratch, trained steps_per_generation steps on the current
    # window before it plays. 'widen': as the old net, exactly (new channels'
    # outgoing weights and new blocks' last batch-norm scale at 0; the
    # optimizer's moments carried over; saijax/core/widen.py), then trained
    # on as before. Filters and blocks may only grow.
    config.training.growth = "retrain"
    # Paper: "typical training rate 0.0001" (SAI's TF config had 5e-4).
    config.training.learning_rate = 1e-4
    # 'constant'; 'piecewise': learning_rate until generation
    # lr_boundaries[0], then lr_values[i] from generation lr_boundaries[i];
    # 'cosine': cosine decay from learning_rate at generation 0 to
    # lr_values[0] at generation lr_boundaries[0], constant after.
    config.training.lr_schedule = "constant"
    config.training.lr_boundaries = ()  # Generations (ints).
    config.training.lr_values = ()  # Learning rates (floats).
    config.training.momentum = 0.9  # SGD momentum (Nesterov below).
    config.training.nesterov = True  # Nesterov momentum (SAI's TF code).
    # L2 coefficient on ½Σw² of conv/dense kernels, in the loss (not as
    # decoupled weight decay), as in Leela Zero's and SAI's training code.
    config.training.l2 = 1e-4
    # Clip gradients to this global norm before the optimizer; 0 disables.
    # Departure: not in SAI's code; a safety net for large learning rates.
    config.training.grad_clip = 10.0
    # Weight of MSE(τ(k), z) on the [0, 1] scale (= SAI's 0.7 on the ±1
    # scale); also the winrate head's weight.
    config.training.value_weight = 2.8
    # Weight of the score head's MSE(s, margin/N²) (LZS used 20).
    config.training.score_weight = 20.0
    # Weight of the ownership loss: mean over the N² points of the squared
    # error between the ownership head and the final Tromp–Taylor ownership
    # (mover's view), over rows of games played out (two passes or the move
    # cap; resigned games are masked). KataGo weighs its per-point loss
    # 1.5/N² summed over points, i.e. 1.5 × a mean over points: use 1.5.
    # > 0 needs network.ownership_head. 0: no ownership loss (SAI).
    config.training.ownership_weight = 0.0
    # Weight of an auxiliary final-score loss for the 'sai' head (KataGo's
    # score target): MSE((α + k_s)/N², margin/N²) on rows of played-out
    # games, where α + k_s is the mover's predicted final margin. Same scale
    # as the score head's loss (so ~1..20). Named apart from score_weight,
    # which weighs the LZS score head. 0: off (SAI).
    config.training.score_aux_weight = 0.0
    # Weight of the opponent policy head's cross-entropy against the next
    # position's policy target (rows without one, e.g. a game's last
    # position, are left out). KataGo used 0.15. > 0 needs
    # network.opponent_policy_head. 0: off (SAI).
    config.training.opponent_policy_weight = 0.0
    # Weight averaging (KataGo's lesson): every train step also updates an
    # exponential moving average of the params and of the batch-norm running
    # stats, ema ← d·ema + (1 − d)·live, starting from the live weights.
    # Self-play, gating's candidates, the α_∅/β_∅ metrics and the network of
    # each checkpoint (`checkpoints.load_network`: players, GTP, zoo) use the
    # average; training goes on from the live weights. Its horizon is about
    # 1/(1 − d) steps, e.g. 0.99 (100 steps) for 200 steps a generation; a
    # horizon much longer than a generation lets the playing net lag behind.
    # Departure: KataGo averages snapshots of the weights (SWA-style), not an
    # EMA. In [0, 1); 0: off (SAI).
    config.training.ema_decay = 0.0
    # Training reuse ratio r: when > 0, a generation trains
    # round(r · new rows / batch_size) steps (at least 1) instead of
    # steps_per_generation, so each new self-play row is sampled about r
    # times however long the games are (KataGo: about 4). The learning-rate
    # schedules still key on generations: each generation trains at the
    # schedule's rate at its start (steps_per_generation still converts
    # generations to steps there, and sets a grown net's catch-up steps).
    # Every run logs the ratio as train_samples_per_new_row (configs/go7.py:
    # about 2.5). 0: off. The sharp recipe: 32 (SAI: about 36; on 7×7 at 4 the
    # net lagged its own data's komi curve); here about 9,000 steps of 512 a
    # generation of 2,000 games, within the paper's 4,000–10,000.
    config.training.samples_per_new_row = 32.0
    # Training steps per program: K > 1 runs a generation's steps in blocks
    # of K, each one jitted lax.scan that samples its batches on the device
    # (the steps left over, fewer than K, go one by one), so the host's cost
    # per step, dispatching the sample and the step and reading the metrics
    # back, is paid once a block. The batches, and so the result, are the
    # same. On the H200, go7_gpu's 4×64 net at batch 1,024 trained 103
    # steps/s step by step and 394 in blocks of 32, against 403 for the
    # steps' compute alone (benchmarks/training.py); on the CPU a scanned
    # step ran several times slower than the step alone. 0: 32 on a GPU or
    # TPU, 1 on the CPU. 1: step by step. One process with one device only
    # (else step by step).
    config.training.steps_per_call = 0

    # --- Optional weak gating (docs/design.md §7). Off: SAI promotes every net.
    config.gating = ml_collections.ConfigDict()
    config.gating.enabled = False  # Promote every trained net (SAI).
    # c: candidate nets exported at regular intervals during training (run 2
    # exported 10).
    config.gating.candidates = 10
    config.gating.games = 50  # m: games of each candidate vs the current net.
    # Score needed to promote the best candidate. SAI's run 2 promoted the best
    # of its candidates whatever its score (0); Leela Zero Score used 0.55.
    config.gating.threshold = 0.0
    # Gating games are played without root noise (deterministic search); the
    # first moves of each colour pair are random instead, so games differ.
    config.gating.opening_moves = 4

    # --- Offline playing styles (docs/design.md §8, saijax.play.styles). Every
    # Tromp–Taylor margin of the run (outcomes, α targets, fair komi, terminal
    # leaves) weights edge points (lines 1..round(3N/13)) by 1 − b and centre
    # points (beyond the next line) by 1 + b: b > 0 trains a centre-oriented
    # net, b < 0 an edge/corner-oriented one (the paper's ±0.2); 0 is Go.
    config.style = ml_collections.ConfigDict()
    config.style.centre_bonus = 0.0  # b in (-1, 1); 0 = standard Go.

    # Start generation 0 from this net instead of a random one: a checkpoint
    # path (workdir, checkpoints dir or step dir) or "zoo:<name>". Its shape,
    # board size and value head must match the config's generation-0 net.
    # Empty: random initialisation. Ignored when the workdir already has a
    # checkpoint (resume).
    config.init_checkpoint = ""

    return config
