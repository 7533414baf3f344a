"""Who may do what: the permission gate, its rule language, the user's settings and project trust."""
