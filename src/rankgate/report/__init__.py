"""The self-contained HTML report (``rankgate report``): charts, history, guidance, export."""
