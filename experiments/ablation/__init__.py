"""The 7×7 self-play ablation: what sharpens the value, at equal evaluations: experiments/ablation/README.md."""
