"""What sets β_∅: how self-play's win rate changes with komi: experiments/opening_spread/README.md."""
