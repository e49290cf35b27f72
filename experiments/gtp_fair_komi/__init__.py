"""The fair komi asked through GTP ([SAI-7x7]: a 7×7 net learns the fair komi 9).

experiments/gtp_fair_komi/README.md.
"""
