"""The only modules that call AWS: S3 and DynamoDB adapters behind domain-level functions."""
