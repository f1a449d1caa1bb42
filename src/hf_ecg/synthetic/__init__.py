"""Whole synthetic datasets: entity sequences asked for, generation runs, baselines, selection, the card."""
