"""Stand-ins for what only AWS does, living with the local stack and named as what they stand for."""
