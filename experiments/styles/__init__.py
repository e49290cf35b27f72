"""Playing styles against GNU Go on 7×7 ([PosCtl] §4.4, §6): experiments/styles/README.md."""
