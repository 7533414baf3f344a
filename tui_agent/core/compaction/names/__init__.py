"""What messages name, read the same way by the tiers, the recap and the recorded-session measures: the
identifiers a message holds (`entities.py`), which of many strings occur in a text (`found_in.py`), and what a
recap's span holds, summed as it grows (`recap_tally.py`)."""
