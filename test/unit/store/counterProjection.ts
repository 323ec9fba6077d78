// A small test projection: counts events per (entity_type, event_type) and remembers the
// last event per entity, so rebuild-vs-incremental comparisons have real rows to compare.
import type { Projection, SqlReader, StoredEvent, SqlWriter } from '../../../src/store/types';

export function counterProjection(version = 1): Projection {
  return {
    name: 'test_counter',
    version,
    tables: ['test_counter', 'test_last'],
    ddl: [
      'CREATE TABLE IF NOT EXISTS test_counter (entity_type TEXT NOT NULL, event_type TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (entity_type, event_type))',
      'CREATE TABLE IF NOT EXISTS test_last (entity_id TEXT NOT NULL PRIMARY KEY, last_event TEXT NOT NULL, last_payload TEXT NOT NULL)',
    ],
    apply(db: SqlWriter, e: StoredEvent): void {
      if (e.payload['explode'] === true) throw new Error('projection refused the event');
      db.run(
        'INSERT INTO test_counter(entity_type, event_type, n) VALUES (?, ?, 1) ON CONFLICT(entity_type, event_type) DO UPDATE SET n = n + 1',
        [e.entity_type, e.event_type],
      );
      db.run('INSERT OR REPLACE INTO test_last(entity_id, last_event, last_payload) VALUES (?, ?, ?)', [
        e.entity_id,
        e.event_id,
        JSON.stringify(e.payload),
      ]);
    },
  };
}

export function counterRows(db: SqlReader): unknown[] {
  return [
    ...db.all('SELECT * FROM test_counter ORDER BY entity_type, event_type'),
    ...db.all('SELECT * FROM test_last ORDER BY entity_id'),
  ];
}
