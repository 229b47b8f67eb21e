import { usageInsertSql, usageRows, type UsageRecord } from './usage';
import { requestLogInsertSql, requestLogRows, type LogSource } from './request-log';

/** The request log row a usage record carries, if any. */
export const carriedLog = (r: UsageRecord | undefined): LogSource[] => (r?.log ? [{ usage: r as UsageRecord & { log: NonNullable<UsageRecord['log']> } }] : []);

/**
 * One statement writing usage events and request log rows, the logs in a data-modifying CTE (each
 * INSERT idempotent, so a batch written again is a no-op); undefined when there is nothing to write.
 * `logs` defaults to the rows the usage records carry. Used by the drainer and by the batch runner,
 * which bills a line's usage in the transaction that records the line (shared/batches/store.ts).
 */
export function usageStatement(usage: UsageRecord[], logs: LogSource[] = usage.flatMap(carriedLog)): { sql: string; params: string[] } | undefined {
  if (!logs.length) return usage.length ? { sql: usageInsertSql('$1'), params: [usageRows(usage)] } : undefined;
  if (!usage.length) return { sql: requestLogInsertSql('$1'), params: [requestLogRows(logs)] };
  return { sql: `WITH usage_written AS (${usageInsertSql('$1')} RETURNING 1) ${requestLogInsertSql('$2')}`, params: [usageRows(usage), requestLogRows(logs)] };
}
