import { usageInsertSql, usageRows, type UsageRecord } from './usage';
import { requestLogInsertSql, requestLogRows, type LogSource } from './request-log';

/** The request log row a usage record carries, if any. */
export const carriedLog = (r: UsageRecord | undefined): LogSource[] => (r?.log ? [{ usage: r as UsageRecord & { log: NonNullable<UsageRecord['log']> } }] : []);

/**
 * A statement of usageStatement. `name`: one per text, for a prepared statement (pg's `{ name, text,
 * values }`): the statement touches every day partition of both tables, and Postgres planned it for
 * every batch (1.1-1.4 ms warm on a week of partitions, more with more days kept); prepared, it may
 * keep a generic plan per connection (issue 29, docs/benchmark.md, eighteenth session).
 */
export interface UsageStatement {
  name: string;
  sql: string;
  params: string[];
}

const USAGE_ONLY = usageInsertSql('$1');
const LOGS_ONLY = requestLogInsertSql('$1');
const BOTH = `WITH usage_written AS (${usageInsertSql('$1')} RETURNING 1) ${requestLogInsertSql('$2')}`;

/**
 * One statement writing usage events and request log rows, the logs in a data-modifying CTE (each
 * INSERT idempotent, so a batch written again is a no-op); undefined when there is nothing to write.
 * `logs` defaults to the rows the usage records carry. Used by the drainer and by the batch runner,
 * which bills a line's usage in the transaction that records the line (shared/batches/store.ts).
 */
export function usageStatement(usage: UsageRecord[], logs: LogSource[] = usage.flatMap(carriedLog)): UsageStatement | undefined {
  if (!logs.length) return usage.length ? { name: 'usage-write-events', sql: USAGE_ONLY, params: [usageRows(usage)] } : undefined;
  if (!usage.length) return { name: 'usage-write-logs', sql: LOGS_ONLY, params: [requestLogRows(logs)] };
  return { name: 'usage-write-both', sql: BOTH, params: [usageRows(usage), requestLogRows(logs)] };
}
