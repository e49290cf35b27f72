"""SAI's sharp value on 7×7 (issue 43): self-play as SAI played it, lever by lever.

experiments/sharp_value/README.md.
"""
