"""Generated messages and stubs of proto/dmlserve/v1/dmlserve.proto."""
