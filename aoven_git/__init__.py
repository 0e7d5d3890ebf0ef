"""aoven-git: git as the notary of a blinded multi-rater LLM scoring study."""

__version__ = "0.1.0"
