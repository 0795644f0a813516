"""DocuFlow's Pulumi components: one ComponentResource per concern, plus pure policy builders.

`__main__.py` composes them; `components.policies` and `components.settings` are pure (no
Pulumi import) and are tested on their own.
"""
