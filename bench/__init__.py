"""The benchmark behind `make bench` (docs/performance.md)."""
