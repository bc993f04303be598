"""The package version: equal to the repository's VERSION file (ctest
version_agreement checks it)."""

__version__ = "0.9.0"
