"""Position control ([PosCtl] §5, §7): experiments/position_control/README.md."""
