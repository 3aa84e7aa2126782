"""Plans that live in files: one markdown plan per session, versioned in the store.

`store` keeps the file and its versions, `service` holds the operations behind
the plan tools and the `baton/plan/*` methods, and `view` decides what the
model sees of the plan (the whole text once, then each change as its diff).
"""
