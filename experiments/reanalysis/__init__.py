"""The first round re-analysed: experiments/reanalysis/README.md."""
