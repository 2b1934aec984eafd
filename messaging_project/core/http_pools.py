"""The queue that keeps a urllib3 pool's idle connections, without a lock.

urllib3 keeps them in a `queue.LifoQueue`, whose every `get` and `put` takes one mutex.
A campaign's hundreds of sending threads take a connection and give it back for each
message: under the GIL such a lock becomes a convoy (each hand-over of it waits for the
GIL behind every runnable thread), and the sends crawled to a few dozen a second. A
deque's `append` and `pop` are atomic (documented thread-safe), which is all a pool that
never blocks (requests' default, `pool_block=False`) needs.
"""

import collections
import queue
from typing import Any


class ConnectionStack(queue.LifoQueue[Any]):
    """A `queue.LifoQueue` whose `get`, `put` and `qsize` (all urllib3's pools use)
    take no lock, for pools that never block: `get` raises Empty at once (the pool then
    opens a connection), and `put` past `maxsize` raises Full (the pool closes the
    connection). Two threads putting back at once may both pass the size check: the
    stack then holds one more than `maxsize` until one is taken again, which only keeps
    a connection open a little longer.

    (urllib3 types `QueueCls` with an unbound type variable, which no subclass matches:
    the pools that take this one say `type: ignore[assignment]`.)"""

    def __init__(self, maxsize: int) -> None:
        super().__init__(maxsize)
        self.items: collections.deque[Any] = collections.deque()

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        try:
            return self.items.pop()
        except IndexError:
            raise queue.Empty from None

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        if self.maxsize > 0 and len(self.items) >= self.maxsize:
            raise queue.Full
        self.items.append(item)

    def qsize(self) -> int:
        return len(self.items)
