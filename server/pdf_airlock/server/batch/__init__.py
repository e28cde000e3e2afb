"""``pdf-airlock batch``: one tool over many documents, JSON Lines out (``run``, ``inputs``,
``output``, ``report``, ``whole``), shards (``shard``) and ``batch-merge`` (``merge``)."""
