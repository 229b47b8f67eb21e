import { request } from 'undici';
import type { AppContext } from '../../api/context';
import type { AuthInfo, BatchLine } from '../../api/types';
import { settleUsage } from '../../shared/limits/limits';
import { TicketApp } from '../../api/ticket-app';
import { identityNow } from '../../api/kept-identity';
import { dialectOf, logFailure } from '../../api/middleware/request-log';
import { config, type Config } from '../../shared/config/env';
import { logger } from '../../shared/logger';
import { laneLimit } from '../../shared/lanes/policy';
import * as store from '../../shared/batches/store';
import type { BatchRow, LineRow } from '../../shared/batches/store';
import { findFile, fileBytes, saveFile } from '../../shared/batches/files';
import { batchModel, parseInput } from '../../shared/batches/input';
import { lineRequestId, openaiResultLine } from '../../shared/batches/results';
import { batchPausedMs, heldBack, pauseBatch, pauseMs, upstreamPauseMs } from '../../shared/batches/pacing';
import { outputFileId } from '../../shared/batches/ids';
import { mayRetry } from '../../shared/errors/codes';
import { ApiError } from '../../shared/errors/ApiError';
import { errorBody } from '../../api/middleware/error-body';
import { releaseLeftSearches } from '../../shared/search/entitlements';

/**
 * Refusals hold a line back instead of failing it (heldBack, shared/batches/pacing.ts): the line goes
 * back to pending (under the same request id, or as its next attempt after the provider's 429 or a
 * lost worker) and no runner sends its batch a new line for the answer's Retry-After (pauseMs: 1 to
 * 10 s; after the provider's 429 upstreamPauseMs: 1 s to 1 min, at least the Retry-After, doubling
 * with the line's waits, counted in `upstream_waits` and never against MAX_ATTEMPTS), so nothing is
 * fed again at once in a loop. The pause is in Redis (pauseBatch), shared by every runner.
 */
const MAX_ATTEMPTS = 3;

/** The synchronous route a batch's lines are sent to. */
const lineRoute = (b: BatchRow): string => (b.dialect === 'anthropic' ? '/v1/messages' : b.endpoint);

/**
 * Runs batches (docs/batches.md). Progress lives in Postgres: each tick it validates new OpenAI
 * batches, claims pending lines of every active batch (at most BATCH_LINES_IN_FLIGHT per batch, SKIP
 * LOCKED across runners), sends each through its TicketApp (the synchronous routes, on the background
 * lane) and records the answer with a conditional update, so a line is recorded once. A line whose
 * runner died is claimed again after BATCH_CLAIM_STALE_MS under the same request id: its job is
 * still in BullMQ (or runs again), and its usage event's request id is unique.
 */
export class BatchRunner {
  private readonly lineApp: TicketApp;
  private timer?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  private ticking = false;
  /** A line finished while a pass was running: run another pass right after it. */
  private again = false;
  private stopped = false;
  private readonly inFlight = new Map<string, Set<Promise<void>>>();
  /** Batches being fed right now (claim in progress). */
  private readonly feeding = new Set<string>();
  /** Batches this runner knows paused (pauseBatch, in Redis for every runner): no new line before this time (ms), no Redis read meanwhile. */
  private readonly pausedUntil = new Map<string, number>();
  readonly id: string;
  /**
   * For tests: awaited in `finalize` once the results are written (an OpenAI batch's files), right
   * before the batch moves to its final status, so a test can cancel at that point (the race of a
   * cancel with the end, message-batch-cancel-race.test.ts). Unset in service.
   */
  beforeEnd?: (b: BatchRow, from: store.BatchStatus, to: store.BatchStatus) => Promise<void>;

  /** BATCH_* settings, with `overrides` on top (tests shorten the claim takeover). */
  private get cfg(): Config['batches'] {
    return { ...config().batches, ...this.overrides };
  }

  constructor(private readonly ctx: AppContext, private readonly overrides: Partial<Config['batches']> = {}) {
    this.lineApp = new TicketApp(ctx);
    this.id = `${config().podId}:batch`;
  }

  async start(): Promise<void> {
    await this.lineApp.start();
    const cfg = this.cfg;
    this.timer = setInterval(() => void this.tick(), cfg.pollMs);
    this.heartbeat = setInterval(() => void store.refreshClaims(this.id).catch((err) => logger.warn({ err }, 'batch claim refresh failed')), Math.max(500, cfg.claimStaleMs / 3));
  }

  /** Stops claiming; lines in flight finish and are recorded (or left claimed, to be taken over). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    // Lines in flight are answered and recorded before the line app closes: cutting them would mark
    // their request ids abandoned, and a request id is reused when the line is taken over.
    while (this.ticking || this.feeding.size || this.inFlight.size) {
      await Promise.allSettled([...this.inFlight.values()].flatMap((s) => [...s]));
      await new Promise((r) => setTimeout(r, 20));
    }
    clearInterval(this.heartbeat);
    await this.lineApp.close();
  }

  /** One pass over every active batch; never two at once in a process. */
  async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      const active = await store.activeBatches();
      for (const id of this.pausedUntil.keys()) if (!active.some((b) => b.id === id)) this.pausedUntil.delete(id); // ended elsewhere
      for (const b of active) {
        if (this.stopped) break;
        await this.advance(b).catch((err) => logger.error({ err, batchId: b.id }, 'batch step failed'));
      }
    } catch (err) {
      logger.warn({ err }, 'batch tick failed');
    } finally {
      this.ticking = false;
      if (this.again && !this.stopped) {
        this.again = false;
        setImmediate(() => void this.tick());
      }
    }
  }

  private async advance(b: BatchRow): Promise<void> {
    if (b.status === 'validating') return this.validate(b);
    if (b.status === 'finalizing') return this.finalize(b, 'finalizing', 'completed');
    if (b.status === 'cancelling' || b.expires_at.getTime() <= Date.now()) {
      const route = lineRoute(b);
      await store.closePending(b.id, b.status === 'cancelling' ? 'canceled' : 'expired', this.cfg.claimStaleMs, { route, dialect: dialectOf(route) });
      await this.giveBackLeftSearches(b.id); // of the dead runners' lines just closed
      if (!(await store.hasLines(b.id, 'running'))) await this.finalize(b, b.status, b.status === 'cancelling' ? 'cancelled' : 'expired');
      return;
    }
    const claimed = await this.feed(b);
    if (claimed === 0 && !this.inFlight.has(b.id) && !(await store.hasLines(b.id, 'pending', 'running'))) {
      if (await store.transition(b.id, ['in_progress'], 'finalizing')) await this.finalize(b, 'finalizing', 'completed');
    }
  }

  /** OpenAI batches: reads the input file into lines (and the model they name), or fails the batch with one error per bad line (the first MAX_LISTED_ERRORS). */
  private async validate(b: BatchRow): Promise<void> {
    // the file was found in the creating request's scope when the batch was made; here only its org's
    const file = b.input_file_id ? await findFile({ orgId: b.org_id, projectId: null }, b.input_file_id) : null;
    const bytes = file ? await fileBytes(file) : undefined;
    if (!bytes) {
      await store.transition(b.id, ['validating'], 'failed', { errors: JSON.stringify({ object: 'list', data: [{ code: 'file_not_found', message: 'The input file no longer exists.', line: null, param: 'input_file_id' }] }) });
      return;
    }
    const { lines, errors } = parseInput(bytes, b.endpoint);
    if (errors.length) {
      await store.transition(b.id, ['validating'], 'failed', { errors: JSON.stringify({ object: 'list', data: errors }) });
      return;
    }
    await store.startLines(b.id, lines, batchModel(lines));
  }

  /**
   * Claims what the batch may still have in flight here and sends it; returns how many lines it
   * claimed. One feed per batch at a time, so the bound holds; a line that ends feeds its batch again
   * at once (not at the next poll), and the poll notices cancels, expiry and the end.
   */
  private async feed(b: BatchRow): Promise<number> {
    if (this.feeding.has(b.id)) return -1;
    this.feeding.add(b.id);
    try {
      const mine = this.inFlight.get(b.id) ?? new Set<Promise<void>>();
      if (this.cfg.linesInFlight <= mine.size || this.stopped || this.ctx.switches.engaged('batches')) return 0; // switched off: nothing new starts
      if ((this.pausedUntil.get(b.id) ?? 0) > Date.now()) return 0; // paced: the poll feeds it after
      this.pausedUntil.delete(b.id);
      const paused = await batchPausedMs(this.ctx.redis, b.id).catch(() => 0); // by any runner (Redis away: this runner's own pauses)
      if (paused > 0) {
        this.pausedUntil.set(b.id, Date.now() + paused);
        return 0;
      }
      const auth = await this.authFor(b);
      // never more lines in flight than the org's lane for them admits: the others would only be refused
      const room = Math.min(this.cfg.linesInFlight, 'keyId' in auth ? this.laneOf(auth) : Infinity) - mine.size;
      if (room <= 0) return 0;
      const lines = await store.claimLines(b.id, this.id, room, this.cfg.claimStaleMs);
      if (lines.length) this.inFlight.set(b.id, mine);
      for (const l of lines) {
        const p = this.runLine(b, l, auth).catch((err) => logger.error({ err, batchId: b.id, idx: l.idx }, 'batch line failed')).finally(() => {
          mine.delete(p);
          if (!mine.size) this.inFlight.delete(b.id);
          if (!this.stopped) void this.feed(b).catch((err) => logger.warn({ err, batchId: b.id }, 'batch feed failed'));
        });
        mine.add(p);
      }
      return lines.length;
    } finally {
      this.feeding.delete(b.id);
    }
  }

  /** The lane count of a batch line (the org's, over all its batches): its `chat:background` count, or BATCH_LINES_IN_FLIGHT when that is 0. */
  private laneOf(auth: AuthInfo): number {
    return laneLimit(auth.org, 'chat', 'background', 0) || this.cfg.linesInFlight;
  }

  /** Sends the batch no new line for `ms` (pauseMs: a refusal's Retry-After), from any runner (pauseBatch). */
  private async pause(b: BatchRow, ms: number): Promise<void> {
    this.pausedUntil.set(b.id, Math.max(this.pausedUntil.get(b.id) ?? 0, Date.now() + ms));
    await pauseBatch(this.ctx.redis, b.id, ms).catch((err) => logger.warn({ err, batchId: b.id }, 'batch pause not shared'));
  }

  /**
   * The identity the batch was created with, as authenticate() builds it; when the key no longer
   * works, the 401 the line's synchronous route answers, in its dialect's shape (OpenAI's `type` and
   * `param`, Anthropic's `type`: what the error file and the results show).
   */
  private async authFor(b: BatchRow): Promise<AuthInfo | { status: number; body: unknown }> {
    const auth = await identityNow(this.ctx, { keyHash: b.key_hash, orgId: b.org_id, projectId: b.project_id, routingPlanId: b.routing_plan_id }, 'created this batch');
    return auth instanceof ApiError ? { status: auth.status, body: errorBody(lineRoute(b), auth) } : auth;
  }

  /**
   * The Activity row of a line refused before it was sent (its batch's key no longer works), as the
   * line app writes one for a line it refuses: the batch's owner and key, the line's model and route,
   * nothing billed. Written once: only by the runner that recorded the line.
   */
  private logRefused(b: BatchRow, l: LineRow, requestId: string, refusal: { status: number; body: unknown }): void {
    const route = lineRoute(b);
    const model = (l.body as { model?: unknown }).model;
    const code = (refusal.body as { error: { code: string } }).error.code;
    const base = { receivedAt: Date.now(), route, dialect: dialectOf(route), userId: null, batchId: b.id };
    logFailure(this.ctx, base, { requestId, orgId: b.org_id, projectId: b.project_id, apiKeyId: b.api_key_id, model: typeof model === 'string' ? model : '' }, { status: refusal.status, code });
  }

  /**
   * Gives back the searches a dead runner reserved for lines now recorded or closed (of line `idx`
   * only, when given) and never charged nor gave back: without it the org's search counters stayed
   * that many searches high until rebuilt from the ledger (docs/batches.md "Searches").
   */
  private async giveBackLeftSearches(batchId: string, idx?: number): Promise<void> {
    const left = await store.leftSearches(batchId, idx);
    if (left.length) await releaseLeftSearches(this.ctx.redis, left);
  }

  private async runLine(b: BatchRow, l: LineRow, auth: AuthInfo | { status: number; body: unknown }): Promise<void> {
    let recorded = false;
    try {
      recorded = await this.sendLine(b, l, auth);
    } finally {
      // recorded by this runner: no one else holds the line, so what an earlier attempt left goes back
      if (recorded) await this.giveBackLeftSearches(b.id, l.idx).catch((err) => logger.warn({ err, batchId: b.id, idx: l.idx }, 'batch line: giving back left searches failed'));
    }
  }

  /** Sends one line and records its outcome; true when this runner recorded it (succeeded or errored). */
  private async sendLine(b: BatchRow, l: LineRow, auth: AuthInfo | { status: number; body: unknown }): Promise<boolean> {
    const requestId = lineRequestId(b.id, l.idx, l.attempt);
    if (!('keyId' in auth)) {
      const done = await store.finishLine(l, this.id, 'errored', auth.status, requestId, auth.body);
      if (done) this.logRefused(b, l, requestId, auth);
      return done;
    }
    const body: Record<string, unknown> = { ...l.body };
    delete body.stream;
    delete body.stream_options;
    const crashRetried = l.attempt - l.upstream_waits + 1 < MAX_ATTEMPTS;
    const line: BatchLine = { batchId: b.id, laneLimit: this.laneOf(auth), priceMultiplier: Number(b.price_multiplier), crashRetried };
    const ticket = this.lineApp.issue({ auth, requestId, line });
    let charged = false;
    try {
      const res = await request(`${this.lineApp.base}${lineRoute(b)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-ticket': ticket, ...(b.dialect === 'anthropic' ? { 'anthropic-version': '2023-06-01' } : {}), ...(b.anthropic_beta ? { 'anthropic-beta': b.anthropic_beta } : {}) },
        body: JSON.stringify(body),
        headersTimeout: config().requestTimeoutMs + 30_000,
        bodyTimeout: config().requestTimeoutMs + 30_000,
      });
      const text = await res.body.text();
      let answer: unknown;
      try {
        answer = JSON.parse(text);
      } catch {
        answer = { error: { code: 'internal_error', message: 'The answer was not JSON.' } };
      }
      if (res.statusCode === 200) {
        // billed here, in the transaction that records the answer: never in Redis alone (docs/batches.md)
        const usage = line.usage ?? [];
        const searches = line.searches ?? [];
        if (await store.finishLine(l, this.id, 'succeeded', 200, requestId, answer, usage, searches.map((s) => s.entry))) {
          charged = true;
          await settleUsage(this.ctx.redis, usage).catch((err) => logger.warn({ err, batchId: b.id }, 'batch line: settling budgets failed'));
          await Promise.all(searches.map((s) => s.settle()));
        }
        return charged;
      }
      const code = (answer as { error?: { code?: string } })?.error?.code ?? '';
      const held = heldBack(code, mayRetry(res.headers), crashRetried);
      if (held === 'same') await this.pause(b, pauseMs(res.headers['retry-after']));
      if (held === 'upstream') await this.pause(b, upstreamPauseMs(res.headers['retry-after'], l.upstream_waits));
      if (held) {
        await store.releaseLine(l, this.id, held);
        return false;
      }
      return await store.finishLine(l, this.id, 'errored', res.statusCode, requestId, answer);
    } catch (err) {
      logger.warn({ err, batchId: b.id, idx: l.idx }, 'batch line request failed; it goes back to pending');
      await this.pause(b, pauseMs(undefined)); // never sent again at once, in a loop
      await store.releaseLine(l, this.id, 'same');
      return false;
    } finally {
      this.lineApp.forget(ticket);
      // the searches of an attempt that is not the line's answer are given back, never billed
      if (!charged) await Promise.all((line.searches ?? []).map((s) => s.release().catch((err) => logger.warn({ err, batchId: b.id }, 'batch line: search release failed'))));
    }
  }

  /**
   * Writes the output and error files (OpenAI) from the recorded lines, then moves the batch to its
   * final status. File ids derive from the batch id, so a runner that dies mid-way and another that
   * finishes the job write the same files once.
   */
  private async finalize(b: BatchRow, from: store.BatchStatus, to: store.BatchStatus): Promise<void> {
    const extra: Record<string, unknown> = {};
    if (b.dialect === 'openai') {
      const lines = await store.finishedLines(b.id);
      const owner = { orgId: b.org_id, projectId: b.project_id, apiKeyId: b.api_key_id };
      const ok = lines.filter((l) => l.state === 'succeeded');
      const bad = lines.filter((l) => l.state !== 'succeeded');
      if (ok.length) {
        extra.output_file_id = outputFileId(b.id, 'output');
        await saveFile(extra.output_file_id as string, owner, 'batch_output', `${b.id}_output.jsonl`, Buffer.from(ok.map((l) => openaiResultLine(b, l)).join('\n') + '\n'), b.output_expires_after_seconds);
      }
      if (bad.length) {
        extra.error_file_id = outputFileId(b.id, 'error');
        await saveFile(extra.error_file_id as string, owner, 'batch_output', `${b.id}_error.jsonl`, Buffer.from(bad.map((l) => openaiResultLine(b, l)).join('\n') + '\n'), b.output_expires_after_seconds);
      }
    }
    await this.beforeEnd?.(b, from, to);
    // conditional: a Message Batch cancelled meanwhile (`finalizing` to `cancelling`) is not completed
    // here; the next pass ends it `cancelled`, its lines as they are (all finished)
    await store.transition(b.id, [from], to, extra);
  }
}
