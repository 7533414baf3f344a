"""Screens: the main chat + budget screen and the modal dialogs."""
