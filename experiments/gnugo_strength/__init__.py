"""5×5: the zoo's `go5` net against GNU Go: experiments/gnugo_strength/README.md."""
