"""Cost models of a placed and routed section (source 002)."""
