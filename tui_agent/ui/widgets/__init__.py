"""One widget per module: chat pieces, the budget panel's parts, the prompt."""
