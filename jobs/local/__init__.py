"""The embedded local AWS stack: DynamoDB Local and moto S3 as processes, and their bootstrap."""
