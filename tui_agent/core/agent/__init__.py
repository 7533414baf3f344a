"""The agent at work: the Session, its query loop and tool round, the one call plan, slash commands, the system
prompt and its parts (project context, skills), and the factory that builds a Session from flags and env."""
