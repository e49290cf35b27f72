"""SAI's sharp value on 7×7 (issue 43): the arms' curves of the learned and the data's komi curve.

    python -m experiments.run --config=experiments/sharp_value/config.py
    python -m experiments.run --config=experiments/sharp_value/config.py --config.redraw=True  # sharp_value.png
    python -m experiments.run --config=experiments/sharp_value/config.py --config.play=True  # re-reads the runs

``experiments/sharp_value/sharp_value.py`` over the shipped round (``shipped``:
``sharp_value/results/main/``): each arm a run of ``python -m saijax.train``
fine-tuned from a zoo net (go7-S1; go7-gpu-G46 for sai_g46 and sharp_g46) with one set of switches (the
commands in experiments/README.md, "SAI's sharp value on 7×7"), summarised
over its last 10 generations. Re-reading needs the arms' workdirs
(``runs/sharp/<arm>``), which the repository does not ship; their curves
are in ``curves.csv``, and an arm whose workdir is gone keeps its rows. One
run an arm is a measurement, not a test; each round from 4 on declares a family
(``LEVER_TESTS``: ``lever_tests.csv``), the data's β of each lever arm
against its parent's, generation by generation; ``LEGS`` cuts the end-state
run into its legs for the stopping rule (``legs.csv``).
"""

from experiments.lib import claims

ARMS = dict(
    sai="runs/sharp/sai",
    sai_fixed30="runs/sharp/sai_fixed30",
    sai_komi_t25="runs/sharp/sai_komi_t25",
    sai_v256="runs/sharp/sai_v256@26",  # round 2 as shipped (its generation 27 ran in round 3, beside spr32's)
    sai_v256_spr32="runs/sharp/sai_v256_spr32@49",  # sai_v256 to generation 26, then 32 samples per new row (round 3)
    sai_v256_spr32_s1="runs/sharp/sai_v256_spr32_s1",  # the same from the same start, seed 1
    # round 4, each from the last generation of one of the two above (configs/go7_sharp.py) plus one lever:
    sai_v256_spr32_t25="runs/sharp/sai_v256_spr32_t25",  # seed 0 from 49, a komi temperature of 0.25
    sai_v256_spr32_s1_t25="runs/sharp/sai_v256_spr32_s1_t25",  # seed 1 from 40, the same (4 generations)
    sai_v256_spr32_s1_lam50="runs/sharp/sai_v256_spr32_s1_lam50",  # seed 1 from 40, λ = 0.5 in self-play
    sai_v256_spr32_v1024="runs/sharp/sai_v256_spr32_v1024",  # seed 0 from 49, 1024 visits, 64 games
    sai_g46="runs/sharp/sai_g46",  # go7-gpu-G46 (4×64) with sai_v256's self-play, 64 games a generation (4 generations)
    # round 5: configs/go7_sharp.py from go7-gpu-G46 (4×64), 64 games a generation
    sharp_g46="runs/sharp/sharp_g46",
    # the end-state run: sai_v256_spr32 (the recipe, seed 0) continued a leg a session (LEGS)
    go7_sharp_s0="runs/sharp/sai_v256_spr32",
    # round 7: the end-state run's generation 89 (leg 3's last checkpoint, its replay window 80-89) with SAI's
    # value loss alone: no final-score target on α (training.score_aux_weight = 0), beside leg 4
    sharp_noaux="runs/sharp/sharp_noaux",
    sharp_noaux_s1="runs/sharp/sharp_noaux_s1",  # the same from the same checkpoint, seed 1 (after leg 4 ended)
    # round 8: the end-state run's compact leg at generation 109 (no replay window, Adam's moments from zero, as
    # leg 5 starts) with SAI's search in self-play: PUCT (c 0.8, most visits), Dirichlet noise at every root
    sharp_puct="runs/sharp/sharp_puct",
    sharp_puct_s1="runs/sharp/sharp_puct_s1",  # the same from the same compact leg, seed 1 (three runs at a time)
    # round 9: the end-state run's generation 129 (a copy of its workdir: replay window 120-129, Adam's moments)
    # with the net widened to 3×64 at generation 130, starting as exactly the 3×32 net (training.growth = "widen")
    puct_w64="runs/sharp/puct_w64",
    # round 10: the same widening from the same copy of generation 129's workdir, seed 1; puct_w64 itself went on
    # from its own workdir at 139 as the control of the levers below (the widening is not called, so the
    # end-state run, LEGS, stays sharp_puct)
    puct_w64_s1="runs/sharp/puct_w64_s1",
    # round 10: puct_w64's generation 140 (a copy of its workdir) with SAI's engine's blunders: a random move
    # more than 0.05 below the searched move's value is a blunder (the rows up to a game's last one are not
    # trained on), and a game may play Poisson(ln 4) of them, then draws among the others only; beside puct_w64
    # itself from the same checkpoint (same seed: generation 141's keys are the same in both)
    puct_w64_blunder="runs/sharp/puct_w64_blunder",  # stopped after its first generation (141): see round10b
    # round 10: puct_w64's generation 141 (a copy of its workdir) with SAI's variable agent in self-play: λ = 0.5,
    # μ = 0, active while the player's winrate is at least 0.5 (search.threshold), so the side ahead keeps its points
    puct_w64_lam50t50="runs/sharp/puct_w64_lam50t50",
    # round 11: puct_w64's generation 146 (a copy of its workdir) with the komi of complete games concentrated
    # (selfplay.komi_temperature = 0.25: the net's logistic at a quarter of its scale), beside puct_w64 itself
    # from the same checkpoint (same seed); puct_w64_lam50t50 continued from its own 145 beside both
    puct_w64_t25="runs/sharp/puct_w64_t25",  # stopped after 151 (see round11)
    # round 11: puct_w64's generation 151 (a copy of its workdir: checkpoint 151, replay window 142-151) with root
    # noise on the 4 random opening moves only (selfplay.noise_moves = 4, as go7_sharp.py), beside puct_w64 itself
    puct_w64_noise4="runs/sharp/puct_w64_noise4",
    # round 12: the same lever with seed 1 from puct_w64's generation 150 (a copy of its workdir: checkpoint 150,
    # replay window 141-150; the workdir kept no checkpoint 151), beside puct_w64 and puct_w64_noise4 continued
    puct_w64_noise4_s1="runs/sharp/puct_w64_noise4_s1",
    # round 12: puct_w64's generation 156 (a copy of its workdir: checkpoint 156, replay window 147-156) with
    # self-play searches of 64 visits instead of 256 (schedules.visits), beside puct_w64 itself (same seed);
    # continued in round 13 from its own 161 (to 171)
    puct_w64_v64="runs/sharp/puct_w64_v64",
    # round 13: puct_w64's generation 161 (a copy of its workdir: checkpoint 161, replay window 152-161) with self-play
    # at the control's compute spent on games, not depth: 64 visits, 512 games a generation (four times the
    # control's 128) and 8 samples per new row (a quarter of its 32), so that self-play's evaluations and the
    # training steps a generation match the control's; beside puct_w64 and puct_w64_v64, both continued from 161
    puct_w64_v64_g512="runs/sharp/puct_w64_v64_g512",
    # round 14: both 64-visit forms again with seed 1, from a copy of puct_w64's generation 160 (checkpoint 160,
    # replay window 151-160; the workdir kept no checkpoint 161), against puct_w64's own 161-168 (seed 0)
    puct_w64_v64_s1="runs/sharp/puct_w64_v64_s1",
    puct_w64_v64_g512_s1="runs/sharp/puct_w64_v64_g512_s1",
    # round 15: SAI's fixed-komi share on the recipe: 30% of the complete games at the board's komi (9.5; the rest
    # drawn from the net's logistic as before), seeds 0 and 1, each from a copy of the end-state run's compact leg
    # at 149 (results/sharp_value/sharp_puct_leg: no replay window, Adam's moments from zero), beside the end-state
    # run's leg 3 (sharp_puct from the same compact leg, seed 0); three runs on the 2 cores
    puct_fixed30="runs/sharp/puct_fixed30",
    puct_fixed30_s1="runs/sharp/puct_fixed30_s1",
    # round 16: from the end-state run's workdir at 165 (replay window 156-165, Adam's moments): root noise on the
    # opening's 4 random moves only (selfplay.noise_moves = 4), seeds 0 and 1, against the end-state run's leg 4
    # (sharp_puct, seed 0) and the same recipe with seed 1 from a copy of the same workdir
    sharp_puct_l4_s1="runs/sharp/sharp_puct_l4_s1",
    puct_noise4="runs/sharp/puct_noise4",
    puct_noise4_s1="runs/sharp/puct_noise4_s1",
)


# Round 4's family, declared after the komi-temperature arm's first 12 generations were seen and before
# the λ and 1024-visit arms had played more than their first: each lever arm's data's β, generation by
# generation over its own generations, against its parent's last 10 before the lever (Welch, Holm, BH).
LEVER_TESTS = (
    "round4:sai_v256_spr32_t25@50=sai_v256_spr32@40-49",
    "round4:sai_v256_spr32_s1_t25@41=sai_v256_spr32_s1@31-40",
    "round4:sai_v256_spr32_s1_lam50@41=sai_v256_spr32_s1@31-40",
    "round4:sai_v256_spr32_v1024@50=sai_v256_spr32@40-49",
    # Round 5's family, declared while the arm played its first generation: the recipe on go7-gpu-G46's
    # 4×64 net (64 games a generation), every generation's data β against the 3×32 recipe's plateau.
    "round5:sharp_g46@0-11=sai_v256_spr32@40-49",
    # Round 6's family, declared before the arm's generation 12 was played (session 6, 2026-11-28): the
    # same arm continued, its new generations only (12 on), against the same plateau.
    "round6:sharp_g46@12=sai_v256_spr32@40-49",
    # Round 7's family, declared while the arm played its first generation (session 7, 2026-11-28): the
    # end-state run's generation 89 without the final-score target on α, its own generations (90 on),
    # against the same run's leg 4 from the same checkpoint (90-109), played side by side; its second seed
    # joined the family before it played (after generation 94 of the first, whose rise in the late β and
    # fall in the score error over 90-94 prompted it).
    "round7:sharp_noaux@90=go7_sharp_s0@90-109",
    "round7:sharp_noaux_s1@90=go7_sharp_s0@90-109",
    # Round 8's family, declared while the arm played its first generation (session 8, 2026-11-28): the end-state
    # run's compact leg at 109 with SAI's search (PUCT, noise at every root) instead of Gumbel, its own
    # generations (110 on), against the run's leg 5 from the same compact leg (110-129), played side by side.
    "round8:sharp_puct@110=go7_sharp_s0@110-129",
    # its second seed joined the family before it played (after generation 121 of the first and 120 of leg 5).
    "round8:sharp_puct_s1@110=go7_sharp_s0@110-129",
    # Round 9's family (session 9, 2026-11-28), written while the arm played its first generation and committed
    # after its 135th (git 574243c; its per-generation figures had been seen, not tested): the end-state
    # run's generation 129 widened to 3×64 at 130 (same seed, same workdir copy), against the end-state run's leg 2
    # from the same checkpoint, played side by side. Generation 130's games are the same in both (the widened net
    # computes what the 3×32 one did, and the keys are the same: measured, data β 0.54 in both), so the test
    # starts at 131, the first generation the 3×64 net trained for. Planned to 149; if the session's time stops
    # the arm earlier, the control's range ends at the arm's last generation too: the time stopped it after 139.
    "round9:puct_w64@131-139=sharp_puct@131-139",  # pinned in round 10, when the arm played on (140-146)
    # Round 10's family (session 10, 2026-11-28), written and committed while the arm played its first generation
    # (130, whose games the 3×32 net's keys of seed 1 decide): round 9's lever repeated with seed 1 from the same
    # copy of generation 129's workdir, against the same control over the same generations. Planned to 139; if the
    # session's time stops the arm earlier, the control's range ends at the arm's last generation too. The lever
    # is called only if this test and round 9's both give p < 0.05 with the same sign (a conjunction of the two
    # seeds, so no correction across them).
    "round10:puct_w64_s1@131-136=sharp_puct@131-136",  # the time stopped the arm after 136
    # Round 10's second family (session 10, 2026-11-28), written and committed while the arm played its first
    # generation (141): SAI's blunder rule on puct_w64 from its generation 140, against puct_w64 itself from the
    # same checkpoint, played side by side, over the same generations: the komi curve of the games whose empty
    # board is trained on (no blunder: data_beta_kept), the rule's mechanism, and the data's β over all complete
    # games (the allowance changes the games too). Planned to 150; if the session's time stops the arm earlier,
    # both ranges end at the arm's last generation (141: see below).
    "round10b:puct_w64_blunder@141-141=puct_w64@141-141#data_beta_kept",
    "round10b:puct_w64_blunder@141-141=puct_w64@141-141",
    # The arm was stopped during its second generation, after its first (141) had shown that SAI's rule touched
    # 10% of the games (blunder_game_share; kept games 104 of 115, the control's 115 of 116): its core went to the
    # arm below, so round10b has one generation and no test.
    # Round 10's third family (session 10, 2026-11-28), written and committed while the arm played its first
    # generation (142), after round 10's board_results.csv had shown (puct_w64, 130-139) the played-out games
    # ending near the komi, not at perfect play's B+9, wherever the komi favoured a side by more than a point:
    # SAI's variable agent in self-play (λ = 0.5, μ = 0, threshold 0.5) on puct_w64 from its generation 141,
    # against puct_w64 itself from the same checkpoint, played side by side, over the same generations: the
    # data's β. Planned to 150; if the session's time stops the arm earlier, both ranges end at its last
    # generation: the time stopped it after 145.
    "round10c:puct_w64_lam50t50@142-145=puct_w64@142-145",
    # Round 11's family (session 11, 2026-11-28), written and committed before either arm played its first
    # generation of the session: the two levers aimed at round 10's mechanism (the favourite gives points back off
    # the fair komi), each against puct_w64 itself continued from its 146 over the same generations, played three
    # at a time: the variable agent (round 10c's arm) continued from its own 145, its new generations only, and
    # the komi concentrated from a copy of puct_w64's 146. Measure: the data's β per generation (Welch; Holm and
    # BH over the two). Planned to 156; if the session's time stops an arm earlier, both of its ranges end at its
    # last generation (and at the control's, if that stops first).
    "round11:puct_w64_lam50t50@146-154=puct_w64@146-154",  # the time stopped the arm after 154
    "round11:puct_w64_t25@147-151=puct_w64@147-151",  # stopped after 151 (below)
    # Added before either arm's first generation of the session had ended: the concentrated komi changes the range
    # the whole-range fit sees, so the komi arm is also measured within 1.5 points of each net's α_∅ (the same window
    # in both arms: data_beta_local). Three tests in the family.
    "round11:puct_w64_t25@147-151=puct_w64@147-151#data_beta_local",
    # The komi arm was stopped after 151, on its figures (the data's β 1.06, 0.83, 0.33, -0.05, 0.40; β_∅ 0.61 ->
    # 0.44) and on decided.csv (new this session: within a point of the fair komi about half the complete games
    # were upsets, decided by the searched moves after move 15, so concentrating the komi there trains on coin
    # flips): a stop chosen after seeing the data, so its two tests end at 151 and their p-values are descriptive.
    # Round 11's second family (session 11, 2026-11-28), written and committed before the arm played its first
    # generation: the late upsets come from the searched moves, and the recipe's self-play puts Dirichlet noise on
    # every root (go7_sharp_puct.py, journal.md); this arm keeps it on the 4 random opening moves only, from a copy of
    # puct_w64's 151, against puct_w64 itself over the same generations. Measures: the data's β per generation
    # (Welch; Holm and BH over the two) and the same within 1.5 points of α_∅. Planned to 160; if the session's
    # time stops it earlier, both ranges end at its last generation.
    "round11b:puct_w64_noise4@152-156=puct_w64@152-156",  # the time stopped the arm after 156
    "round11b:puct_w64_noise4@152-156=puct_w64@152-156#data_beta_local",
    # Round 12's family (session 12, 2026-11-29), written and committed before any arm played its first generation
    # of the session: round 11b's lever (root noise on the 4 random opening moves only) repeated with seed 1 from a
    # copy of puct_w64's 150, and round 11b's arm continued from its own 156, its new generations only, each
    # against puct_w64 itself continued from its 156 over the same generations, three runs at a time. Measure: the
    # data's β per generation (Welch; Holm and BH over the two). The lever is called only if both tests give Holm
    # p < 0.05 with the same sign. Planned to 166 (seed 0) and 160 (seed 1); if the session's time stops an arm
    # earlier, both of its ranges end at its last generation (and at the control's, if that stops first).
    "round12:puct_w64_noise4@157-161=puct_w64@157-161",  # the time stopped the three runs after 161
    "round12:puct_w64_noise4_s1@151-156=puct_w64@151-156",  # the time stopped the arm after 156
    # Round 12's second family (session 12, 2026-11-29), written and committed before the arm played its first
    # generation, after a measurement of puct_w64's 156 and before any generation of the arm: its deterministic games
    # after 4 random opening moves (opening_spread, PUCT, Black at komi 8.5) were won by Black 92% at 64 visits
    # (round 11) and 34% at 256 visits, self-play's (8% at 7.5), the same openings' fights ending with White's group
    # dead at 64 and Black's at 256. The arm: self-play at 64 visits (schedules.visits), everything else the
    # recipe's, from a copy of puct_w64's 156, against puct_w64 itself over the same generations (same seed).
    # Measures: the data's β and the data's α per generation (Welch; Holm and BH over the two). Planned to 166;
    # if the session's time stops it earlier, both ranges end at its last generation (and at the control's).
    "round12b:puct_w64_v64@157-161=puct_w64@157-161",  # the time stopped the arm and the control after 161
    "round12b:puct_w64_v64@157-161=puct_w64@157-161#data_alpha",
    # Round 13's family (session 13, 2026-11-29), written and committed before any arm played its first generation
    # of the session: round 12b's arm (64 visits, a quarter of the control's self-play evaluations) continued from its
    # own 161, and the same visits at the control's compute (512 games a generation, 8 samples per new row) from a
    # copy of puct_w64's 161, each over its new generations against puct_w64 itself continued from 161 (same seed).
    # Measures: the data's β and the data's α per generation (Welch; Holm and BH over the four). Every arm is one
    # seed, so nothing is called from this family: a Holm p < 0.05 makes its lever the next round's candidate for
    # a second seed. Planned to 168; if the session's time stops an arm earlier, its ranges end at its last
    # generation (and at the control's, if that stops first).
    "round13:puct_w64_v64@162-168=puct_w64@162-168",  # all three played to 168 as planned; this arm then to 171
    "round13:puct_w64_v64@162-168=puct_w64@162-168#data_alpha",
    "round13:puct_w64_v64_g512@162-168=puct_w64@162-168",
    "round13:puct_w64_v64_g512@162-168=puct_w64@162-168#data_alpha",
    # Round 14's family (session 14, 2026-11-29), written and committed before either arm played its first
    # generation: round 13's two 64-visit forms (64 visits with 128 games and 32 samples per new row; 64 visits at the
    # control's compute, 512 games and 8 samples per new row) repeated with seed 1 from a copy of puct_w64's 160, each
    # over its own generations against puct_w64's 161-168, which the control played in rounds 12 and 13 (seed 0)
    # before this round was written; the two arms run side by side. Measures: the data's α and the data's β per
    # generation (Welch; Holm and BH over the four). A form's lever is called on a measure only if this round's test
    # and round 13's of the same form both give Holm p < 0.05 with the same sign (a conjunction of two seeds, so no
    # correction across the rounds). Planned to 168; if the session's time stops an arm earlier, both of its ranges
    # end at its last generation.
    "round14:puct_w64_v64_s1@161-168=puct_w64@161-168",
    "round14:puct_w64_v64_s1@161-168=puct_w64@161-168#data_alpha",
    "round14:puct_w64_v64_g512_s1@161-168=puct_w64@161-168",
    "round14:puct_w64_v64_g512_s1@161-168=puct_w64@161-168#data_alpha",
    # Round 15's family (session 15, 2026-11-29), written and committed before any of the three runs played its first
    # generation: SAI's fixed-komi share (selfplay.fixed_komi_share = 0.3: 30% of the complete games at komi 9.5,
    # where perfect play's B+9 loses by half a point; the other 70% drawn from the net's logistic as before), seeds 0
    # and 1, each from a copy of the end-state run's compact leg at 149, against the end-state run's leg 3 (seed 0)
    # from the same compact leg over the same generations, the three side by side. The round-14 workdirs (the 3×64
    # line) were lost with the last session's machine, so the round starts from the one committed checkpoint of the
    # line, the 3×32 recipe's. Measures: the data's β and the data's α per generation (Welch; Holm and BH over the
    # four). The share also moves the data's β by itself (it puts 30% of the fitted games at one komi), so a called
    # data β is read beside the net's own β_∅ and GTP at the end, which the family does not test. The lever is called
    # on a measure only if both seeds give Holm p < 0.05 with the same sign. Planned to 165; if the session's time
    # stops the runs earlier, every range ends at the last generation all three reached.
    "round15:puct_fixed30@150-165=sharp_puct@150-165",
    "round15:puct_fixed30@150-165=sharp_puct@150-165#data_alpha",
    "round15:puct_fixed30_s1@150-165=sharp_puct@150-165",
    "round15:puct_fixed30_s1@150-165=sharp_puct@150-165#data_alpha",  # all three played to 165 as planned
    # Round 16's family (session 16, 2026-11-29), written and committed before any of the four runs played its first
    # generation: root noise on the opening's 4 random moves only (selfplay.noise_moves = 4; the recipe: Dirichlet
    # noise at every root), the move after them the search's most visited without noise, against the recipe itself,
    # in pairs of seeds: each of the four runs from the end-state run's workdir at 165 (its replay window 156-165 and
    # Adam's moments), the control seed 0 being the end-state run's leg 4 in that workdir, the other three copies of
    # it. The four run side by side. Why this lever: at komi 8.5 with 256-visit PUCT after 4 random moves, adding the
    # recipe's root noise at every move cut Black's wins from 0.91 to 0.75 (puct_fixed30_s1 at 165) and from 0.64 to
    # 0.58 (sharp_puct at 165), 64 games each (experiments/opening_spread/opening_spread.py --noise_every_root
    # --dirichlet_fraction=0.25), while self-play scores about half there. Measures: the data's β and the data's α
    # per generation, each lever seed against the control of the same seed (Welch; Holm and BH over the four). The
    # lever is called on a measure only if both seeds give Holm p < 0.05 with the same sign. Planned to 180; if the
    # session's time stops the runs earlier, every range ends at the last generation all four reached.
    "round16:puct_noise4@166-180=sharp_puct@166-180",
    "round16:puct_noise4@166-180=sharp_puct@166-180#data_alpha",
    "round16:puct_noise4_s1@166-180=sharp_puct_l4_s1@166-180",
    "round16:puct_noise4_s1@166-180=sharp_puct_l4_s1@166-180#data_alpha",
)


# The end-state run (issue 43, "The end state"): the recipe's (configs/go7_sharp.py) seed 0, one leg a
# session, each from the last one's newest checkpoint. The stopping rule: three consecutive legs that move
# β_∅ by less than 0.1 (legs.csv).
LEGS = (
    "go7_sharp_s0@27-49,50-69,70-89,90-109,110-129",  # round 3 (from sai_v256's 26), 5, 6 (two legs), 7, 8
    # from round 8 on, the end-state run goes on under go7_sharp_puct.py (journal.md): its seed 0, from
    # go7_sharp_s0's 109
    # rounds 8, 9 (leg 2 from its own workdir: replay window and Adam's moments), 15 (leg 3 from leg 2's compact leg
    # at 149: no replay window, Adam's moments from zero; the round-9-to-14 workdirs were lost)
    # round 16 (leg 4 from leg 3's own workdir at 165: replay window and Adam's moments)
    "sharp_puct@110-129,130-149,150-165,166-180",
    # from round 16 on, under go7_sharp_noise4.py (journal.md; root noise on the opening's 4 moves only): its seed 0,
    # puct_noise4, from sharp_puct's workdir at 165
    "puct_noise4@166-180",
)


def get_config():
    c = claims.claim_config("sharp_value")
    c.match = dict(board_size=7)
    arms = tuple(f"{k}={v}" for k, v in ARMS.items())
    c.runs = dict(main=dict(arms=arms, last=10, lever_tests=LEVER_TESTS, legs=LEGS))
    c.rebuild = dict(plot_only=True)
    c.shipped = dict(main="experiments/sharp_value/results/main")
    c.figures = dict(main=["sharp_value.png"])
    return c
