"""The machinery every paper shares, knowing no paper by name: papers register themselves.

- :mod:`.papers`: the registry of papers and their data folders;
- :mod:`.artifacts`: artifact id -> the runs it reads;
- :mod:`.inventory`: every table and figure and what flcore does with it;
- :mod:`.published`: the papers' published numbers;
- :mod:`.claims`: the papers' claims as checkable comparisons, and their verdicts;
- :mod:`.runner`: get an artifact's runs from the store, training the missing ones;
- :mod:`.budget`: the book's estimated training time;
- :mod:`.targets`, :mod:`.method_costs`: rounds and transmissions to a target, method costs;
- :mod:`.run_geometry`, :mod:`.per_client`, :mod:`.splits`: what the analysis pages
  compute from stored runs and generated splits.
"""
