"""A writer process for the store tests: appends `COUNT` entries to one session, one append at
a time, and prints each entry's index once its `append` has returned (a kill -9 test reads
those lines: every index printed must be in the store).

    python store_writer.py DSN TABLE PROJECT SESSION COUNT
"""

from __future__ import annotations

import sys

from queryloop.session.postgres_store import PostgresSessionStore
from queryloop.session.store_api import SessionKey


def main(dsn: str, table: str, project: str, session: str, count: int) -> None:
    """Append `count` entries, reporting each as it is durable."""
    store = PostgresSessionStore(dsn, table=table)
    key = SessionKey(project_key=project, session_id=session)
    for index in range(count):
        store.append(key, [{"record": "message", "index": index, "text": f"entry {index}"}])
        print(index, flush=True)


if __name__ == "__main__":
    dsn, table, project, session, count = sys.argv[1:6]
    main(dsn, table, project, session, int(count))
