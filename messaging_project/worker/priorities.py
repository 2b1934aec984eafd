"""Which tasks go first: the claim takes the highest priority first (then the oldest),
and a worker keeps some of its threads for what is not bulk work.

- INTERACTIVE: someone waits on it (an auto-reply, an inbound message's media).
- The default (0): periodic clean-ups, starting a scheduled campaign.
- BULK: long work at its own pace (a campaign's sender task, which holds its thread for
  a slice of up to 20 s). A process runs bulk tasks in at most `bulk_threads(threads)` of
  its threads at once, so however many campaigns wait, the others stay free for
  interactive work.
"""

INTERACTIVE = 10
BULK = -10


def is_bulk(priority: int) -> bool:
    return priority < 0


def bulk_threads(threads: int) -> int:
    """Threads of `threads` that may run bulk tasks at once: a quarter (one at least)
    kept for the rest, unless the worker has only one thread."""
    if threads <= 1:
        return threads
    return threads - max(1, threads // 4)
