import type { ChainableCommander } from 'ioredis';
import type { Pool } from 'pg';
import { keys } from '../redis/keys';
import { createRedis, type RedisClient } from '../redis/connection';
import { config } from '../config/env';
import { logger } from '../logger';
import { usageDrained } from '../metrics';
import { usagePool, type UsageRecord } from './usage';
import { carriedLog, usageStatement } from './usage-statement';
import { settleUsage } from '../limits/limits';
import { decodeUsage, OUTBOX_GROUP } from './usage-outbox';
import { usageWriteSpans } from '../tracing/job-spans';
import { decodeLogEntry, isLogFields, type LogSource, type RequestLogEntry } from './request-log';

export interface UsageDrainerOptions {
  /** Consumer name in the group; default `<pod id>:<pid>`. */
  consumer?: string;
  /** Entries read and not acknowledged for this long belong to a dead drainer and are claimed; default USAGE_CLAIM_IDLE_MS (30 s). */
  claimIdleMs?: number;
  /**
   * A consumer of the group that has held nothing and not read for this long belongs to a process
   * that is gone (a live drainer reads every `blockMs`); it is removed so the group does not grow
   * with every restart. Default: 20 × claimIdleMs, at least 10 minutes.
   */
  forgetConsumerIdleMs?: number;
  /**
   * After a batch smaller than `count`, the next read waits until this long after the previous one
   * began, so that under load events are written in batches rather than a few rows per insert (each
   * insert and acknowledgement costs the worker about as much CPU for one row as for hundreds).
   * Default USAGE_BATCH_INTERVAL_MS (200 ms); 0 reads again at once.
   */
  batchIntervalMs?: number;
  /** How long one read waits for new entries (and so the longest a stop waits for a read); default 250 ms. */
  blockMs?: number;
  /** Entries per read, and so per INSERT; default 500. */
  count?: number;
  /** Where to insert; default the usage pool (`synchronous_commit=off`, shared/metering/usage.ts). */
  pool?: Pool;
  /** The outbox stream; default keys.usageOutbox(). */
  stream?: string;
  /** Where refused entries go; default keys.usageDeadLetters(). */
  deadLetters?: string;
}

type Entry = [id: string, fields: string[] | null];
/** An entry read: a usage record (with its log row when it carries one), or a log-only entry. */
type Decoded = { id: string; raw: string | undefined; record?: UsageRecord; log?: RequestLogEntry; logField?: boolean };

/** Decodes one entry: `u` (usage, perhaps with `log`) or `l` (log only); neither valid: refused. */
function decodeEntry(id: string, fields: string[]): Decoded {
  const u = fieldOf(fields, 'u');
  if (u !== undefined) {
    const record = decodeUsage(u);
    // a bad log row never costs the usage event
    if (record?.log !== undefined && !isLogFields(record.log)) delete record.log;
    return { id, raw: u, record };
  }
  const l = fieldOf(fields, 'l');
  return { id, raw: l, log: decodeLogEntry(l), logField: l !== undefined };
}

/** The request log rows of a batch. */
function logSources(batch: Decoded[]): LogSource[] {
  return batch.flatMap((d): LogSource[] => (d.log ? [{ entry: d.log }] : carriedLog(d.record)));
}

/**
 * Writes a batch in one statement (usageStatement), prepared under its name on each connection of the
 * pool: planned for every batch, it cost Postgres more than writing a batch of 30 events (docs/benchmark.md).
 */
async function writeBatch(batch: Decoded[], db: Pool): Promise<void> {
  const s = usageStatement(batch.filter((d) => d.record).map((d) => d.record!), logSources(batch));
  if (s) await db.query({ name: s.name, text: s.sql, values: s.params });
}

/** Postgres refused the row itself (SQLSTATE class 22 data exception, 23 integrity violation). */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/** A field of a flat `[name, value, name, value, ...]` reply (stream entries, XINFO rows). */
const fieldOf = <T>(fields: readonly T[] | null, name: string): T | undefined => {
  if (!fields) return undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
};

/**
 * Moves usage events (and request log rows, shared/metering/request-log.ts) from one Redis outbox stream into Postgres. Every worker process runs one per
 * stream (UsageDrainers), as a
 * consumer of one group: XREADGROUP (BLOCK, COUNT), one statement inserting the batch's usage events
 * and log rows (each idempotent: shared/metering/usage.ts, request-log.ts), then XACK + XDEL. Entries a dead drainer read but never acknowledged are
 * claimed (XAUTOCLAIM) once idle for `claimIdleMs`, at start and periodically; inserting them again
 * is a no-op, so every event lands exactly once. A batch Postgres refuses is retried row by row: an
 * entry refused on its own (or not a usage record at all) moves to the dead-letter stream; any other
 * failure (Postgres unreachable) leaves the batch pending and is retried after a pause.
 */
export class UsageDrainer {
  readonly consumer: string;
  private readonly stream: string;
  private readonly deadLetters: string;
  private readonly claimIdleMs: number;
  private readonly blockMs: number;
  private readonly batchIntervalMs: number;
  private readonly forgetConsumerIdleMs: number;
  private readonly count: number;
  private readonly pool: Pool | undefined;
  private redis: RedisClient | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;
  private stopBy = 0;
  private lastClaim = 0;
  /** Re-read this consumer's own pending entries before new ones (at start and after a failure). */
  private ownFirst = true;
  /** Cuts a retry pause short when the drainer is stopped. */
  private wake: (() => void) | undefined;

  constructor(opts: UsageDrainerOptions = {}) {
    const cfg = config();
    this.consumer = opts.consumer ?? `${cfg.podId}:${process.pid}`;
    this.stream = opts.stream ?? keys.usageOutbox();
    this.deadLetters = opts.deadLetters ?? keys.usageDeadLetters();
    this.claimIdleMs = opts.claimIdleMs ?? cfg.usageClaimIdleMs;
    this.blockMs = opts.blockMs ?? 250;
    this.batchIntervalMs = opts.batchIntervalMs ?? cfg.usageBatchIntervalMs;
    this.forgetConsumerIdleMs = opts.forgetConsumerIdleMs ?? Math.max(600_000, 20 * this.claimIdleMs);
    this.count = opts.count ?? 500;
    this.pool = opts.pool;
  }

  /** Creates the group (if needed) and starts the loop; a stopped drainer may be started again. */
  async start(): Promise<void> {
    if (this.running) return;
    this.redis = createRedis('worker'); // its own connection: XREADGROUP BLOCK holds it
    this.stopping = false;
    this.ownFirst = true;
    this.lastClaim = 0;
    await this.ensureGroup();
    this.running = this.loop();
  }

  /**
   * Stops after draining what is already in the outbox (for at most `graceMs`), then leaves the
   * group if it holds nothing. Call it after the workers have closed, so their last events go too.
   */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.stopBy = Date.now() + graceMs;
    this.wake?.();
    await this.running;
    this.running = undefined;
    const redis = this.redis!;
    this.redis = undefined;
    try {
      const mine = (await redis.xpending(this.stream, OUTBOX_GROUP, '-', '+', 1, this.consumer)) as unknown[];
      if (mine.length === 0) await redis.xgroup('DELCONSUMER', this.stream, OUTBOX_GROUP, this.consumer);
    } catch {
      /* the group may be gone; nothing to tidy */
    }
    redis.disconnect();
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.redis!.xgroup('CREATE', this.stream, OUTBOX_GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).startsWith('BUSYGROUP')) throw err;
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!(this.stopping && Date.now() > this.stopBy)) {
      try {
        if (!this.stopping && Date.now() - this.lastClaim >= this.claimIdleMs / 2) {
          await this.claimIdle();
          this.lastClaim = Date.now();
        }
        const own = this.ownFirst;
        const readAt = Date.now();
        const entries = await this.read(own ? '0' : '>');
        if (own && !entries.length) this.ownFirst = false;
        else if (entries.length) {
          await this.drain(entries);
          if (entries.length < this.count && !this.stopping) await this.pause(readAt + this.batchIntervalMs - Date.now());
        } else if (this.stopping) break; // nothing left to drain
        failures = 0;
      } catch (err) {
        if (this.stopping) break;
        if (String((err as Error).message).startsWith('NOGROUP')) {
          await this.ensureGroup().catch(() => undefined); // the stream was deleted (e.g. FLUSHALL)
          continue;
        }
        failures++;
        this.ownFirst = true;
        logger.warn({ err, consumer: this.consumer, failures }, 'usage drainer: batch not written; retrying');
        await this.pause(Math.min(30_000, 250 * 2 ** Math.min(failures, 7)));
      }
    }
  }

  /** Waits `ms` (nothing if ≤ 0); a stop cuts it short. */
  private async pause(ms: number): Promise<void> {
    if (ms <= 0) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
    this.wake = undefined;
  }

  private async read(from: '0' | '>'): Promise<Entry[]> {
    const r = this.redis!;
    const block = from === '>' && !this.stopping ? ['BLOCK', this.blockMs] : [];
    const res = (await (r.xreadgroup as (...a: unknown[]) => Promise<unknown>)(
      'GROUP', OUTBOX_GROUP, this.consumer, 'COUNT', this.count, ...block, 'STREAMS', this.stream, from,
    )) as Array<[string, Entry[]]> | null;
    return res?.[0]?.[1] ?? [];
  }

  /** Takes over entries other (dead) consumers read and never acknowledged, and drains them. */
  private async claimIdle(): Promise<void> {
    let cursor = '0-0';
    for (let page = 0; page < 20; page++) {
      const [next, entries] = (await this.redis!.xautoclaim(this.stream, OUTBOX_GROUP, this.consumer, this.claimIdleMs, cursor, 'COUNT', this.count)) as [string, Entry[]];
      if (entries.length) {
        logger.info({ consumer: this.consumer, entries: entries.length }, 'usage drainer: claimed entries of an idle consumer');
        await this.drain(entries);
      }
      if (next === '0-0') break;
      cursor = next;
    }
    await this.forgetGoneConsumers();
  }

  /**
   * Removes consumers that hold no entries and have not read for `forgetConsumerIdleMs` (processes
   * that stopped without leaving the group). Their entries, had they any, were claimed above; a
   * consumer with pending entries is never removed, so no entry can lose its place in the group.
   */
  private async forgetGoneConsumers(): Promise<void> {
    const rows = (await this.redis!.xinfo('CONSUMERS', this.stream, OUTBOX_GROUP)) as unknown[][];
    for (const row of rows) {
      const name = String(fieldOf(row, 'name'));
      if (name === this.consumer || Number(fieldOf(row, 'pending')) !== 0 || Number(fieldOf(row, 'idle')) < this.forgetConsumerIdleMs) continue;
      await this.redis!.xgroup('DELCONSUMER', this.stream, OUTBOX_GROUP, name);
      logger.info({ consumer: name }, 'usage drainer: removed a consumer of a stopped process');
    }
  }

  /** Inserts a batch, dead-letters what Postgres refuses alone, then acknowledges and deletes it. */
  private async drain(entries: Entry[]): Promise<void> {
    const gone = entries.filter(([, f]) => !f).map(([id]) => id); // deleted while pending
    const decoded: Decoded[] = entries.filter(([, f]) => f).map(([id, f]) => decodeEntry(id, f!));
    const bad: Array<Decoded & { reason: string }> = decoded.filter((d) => !d.record && !d.log).map((d) => ({ ...d, reason: d.logField ? 'not a request log entry' : 'not a usage record' }));
    let good = decoded.filter((d) => d.record || d.log);
    const spans = usageWriteSpans(good.filter((d) => d.record).map((d) => d.record!), Date.now());
    if (good.length) {
      const db = this.pool ?? usagePool();
      try {
        await writeBatch(good, db);
      } catch (batchErr) {
        if (!isDataError(batchErr)) {
          spans?.forEach((s) => (s.fail('db_unavailable'), s.end())); // the batch is retried: a later span shows the write
          throw batchErr;
        }
        const inserted: Decoded[] = [];
        for (const d of good) {
          try {
            await writeBatch([d], db);
            inserted.push(d);
          } catch (err) {
            if (!isDataError(err)) throw err;
            const e = err as { code: string; message: string };
            bad.push({ ...d, reason: `${e.code}: ${e.message}` });
          }
        }
        good = inserted;
      }
    }
    if (spans) for (const s of spans) s.end();
    // the ledger has these events now: their budget reservations settle to the real cost
    const billed = good.filter((d) => d.record).map((d) => d.record!);
    if (billed.length) await settleUsage(this.redis!, billed).catch((err) => logger.warn({ err }, 'usage drainer: settling budgets failed'));
    if (bad.length) await this.deadLetter(bad);
    const done = [...good.map((d) => d.id), ...gone];
    if (done.length) await this.exec(this.redis!.multi().xack(this.stream, OUTBOX_GROUP, ...done).xdel(this.stream, ...done));
    usageDrained.inc({ outcome: 'written' }, billed.length);
  }

  private async deadLetter(bad: Array<Decoded & { reason: string }>): Promise<void> {
    const tx = this.redis!.multi();
    for (const d of bad) {
      logger.error({ entry: d.id, requestId: d.record?.requestId ?? d.log?.requestId, reason: d.reason.slice(0, 200) }, 'usage drainer: entry refused; moved to the dead-letter stream');
      tx.xadd(this.deadLetters, '*', 'id', d.id, d.logField ? 'l' : 'u', d.raw ?? '', 'error', d.reason.slice(0, 1000));
    }
    const ids = bad.map((d) => d.id);
    await this.exec(tx.xack(this.stream, OUTBOX_GROUP, ...ids).xdel(this.stream, ...ids));
    usageDrained.inc({ outcome: 'dead_letter' }, bad.length);
  }

  private async exec(tx: ChainableCommander): Promise<void> {
    const res = await tx.exec();
    const failed = res?.find(([err]) => err);
    if (!res || failed) throw failed?.[0] ?? new Error('usage outbox transaction aborted');
  }
}
