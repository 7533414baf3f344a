"""Shell safety: a Bash line as the permission rules see it (words, here-documents, what it may run), and
the processes it starts (process groups, descendants), ended on timeout, Esc and exit."""
