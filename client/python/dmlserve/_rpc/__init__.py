"""google.rpc messages (generated), used when googleapis-common-protos is not installed."""
