"""The worker's hand-written SQL: what the ORM cannot say, or says too slowly for the
path it is on. Each statement says why it is written out."""

# django_tasks_db's claim on PostgreSQL, as one UPDATE ... RETURNING: the first ready
# task in its order (the ready index's), locked with SKIP LOCKED, marked RUNNING with the
# worker appended to worker_ids. One round trip instead of four, for every task and every
# look at an empty queue; written out, as the ORM's compiling cost more than the round
# trip (docs/performance.md, 2026-11-25).
CLAIM = """
    UPDATE {table} SET status = %s, started_at = %s,
        worker_ids = worker_ids || jsonb_build_array(%s::text)
    WHERE id = (
        SELECT id FROM {table}
        WHERE status = %s AND (run_after = %s OR run_after <= %s) AND backend_name = %s{only}
        ORDER BY priority DESC, run_after ASC, enqueued_at ASC
        LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING {columns}
"""
