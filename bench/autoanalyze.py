"""On a server whose autovacuum is off (the CI cluster's), a stack's tables analyzed as
autovacuum would analyze them (bench/stack.py starts it with each stack)."""

import threading

import psycopg
import psycopg.sql

# The tables autovacuum would analyze now: changed by more than its threshold since
# their last ANALYZE (the server's own autovacuum_analyze_* settings).
STALE_TABLES_SQL = """
SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
WHERE s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::int
    + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0)
"""
ANALYZE_EVERY = 5.0


class Autoanalyze:
    """The database's tables analyzed as autovacuum's threshold asks, every ANALYZE_EVERY
    seconds, until `stop()`; nothing when the server's autovacuum is on.

    Each connection keeps the plans of its foreign-key checks. Planned while a table was
    nearly empty they scan it whole, and they are planned again only when the table's
    statistics change. In production autovacuum analyzes a growing table, and a service
    in use has long had statistics for its tables; a bench's tables start empty, and
    without this every check on the campaign's chats read the whole table (PostgreSQL
    spent 3.5 ms a message against 1.8). Its work is on the stack's database, so
    bench/cpu.py counts it as the service's."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, name="autoanalyze", daemon=True)

    def start(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            if conn.execute("SHOW autovacuum").fetchone()[0] == "on":
                return
        self.thread.start()

    def run(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            # Throttled as autovacuum's own ANALYZE is: unthrottled, each one was a burst
            # that doubled the no-op's p99 beside a campaign or an import.
            conn.execute(
                "SELECT set_config('vacuum_cost_delay',"
                " current_setting('autovacuum_vacuum_cost_delay'), false),"
                " set_config('vacuum_cost_limit', CASE"
                " WHEN current_setting('autovacuum_vacuum_cost_limit') = '-1'"
                " THEN current_setting('vacuum_cost_limit')"
                " ELSE current_setting('autovacuum_vacuum_cost_limit') END, false)"
            )
            while not self.stopping.wait(ANALYZE_EVERY):
                for (table,) in conn.execute(STALE_TABLES_SQL).fetchall():
                    conn.execute(
                        psycopg.sql.SQL("ANALYZE {}").format(psycopg.sql.Identifier(table))
                    )

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(60)
