"""CiteLens: a language server that checks citations against scholarly sources."""

__version__ = "0.1.0"
