import crypto from 'crypto';
import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import type { RouteStep } from '../queues/payloads';
import { PICK_DEPLOYMENT, RENEW_ATTEMPT, SETTLE_DEPLOYMENT } from './scripts';

/**
 * A pool of one deployment without rpm, tpm or concurrency limits: nothing to choose or count, so its
 * pick is made in the process (PoolState.pickLocal), and a request's token estimate is not needed for it.
 */
export function pickedLocally(step: RouteStep): boolean {
  const only = step.deployments[0];
  return step.deployments.length === 1 && only.rpm === null && only.tpm === null && only.maxConcurrency === null;
}

export type Pick =
  | { kind: 'picked'; index: number; probe: boolean; lease: AttemptLease }
  /** Every deployment is cooling down or being probed: try again after `waitMs`. */
  | { kind: 'cooling'; waitMs: number }
  /** The ones not cooling are at their rpm/tpm/concurrency limits. */
  | { kind: 'limited'; waitMs: number };

/** What settles one attempt: its in-flight entry and the minute its tokens were counted in. */
export interface AttemptLease {
  poolId: string;
  deployment: string;
  member: string;
  minute: number;
  estimatedTokens: number;
  cooldowns: boolean;
  /** When it was taken (Redis time, ms): a failure of an attempt older than the current cooldown does not count again. */
  startedAt: number;
  /** Taken without Redis (a pool of one without limits): nothing to settle. */
  local?: boolean;
  /** The deployment's single probe attempt: `hold` renews its probe lease too. */
  probe?: boolean;
}

export type Verdict = 'up' | 'down' | 'none';

export interface RoutingTunables {
  probeLeaseMs: number;
  /** An attempt's in-flight entry expires this long after it was taken or last renewed (POOL_INFLIGHT_LEASE_MS). */
  inflightLeaseMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

interface PoolCommands {
  gwPickDeployment(...args: Array<string | number>): Promise<[number, number, number?, number?]>;
  gwSettleDeployment(...args: Array<string | number>): Promise<[number, number]>;
  gwRenewAttempt(...args: Array<string | number>): Promise<number>;
}

const minuteOf = (ms: number) => Math.floor(ms / 60_000);

/**
 * Health, in-flight counts and rate counters of every deployment, in Redis so that every worker
 * process sees the same (one hash tag per pool: cluster-safe, one script weighs a whole pool).
 * A pool of one has no cooldown: there is nowhere else to send its traffic, so its requests retry
 * it after their own backoff instead of being turned away.
 */
export class PoolState {
  private readonly cmd: RedisClient & PoolCommands;

  constructor(redis: RedisClient, private readonly t: RoutingTunables) {
    redis.defineCommand('gwPickDeployment', { lua: PICK_DEPLOYMENT });
    redis.defineCommand('gwSettleDeployment', { numberOfKeys: 3, lua: SETTLE_DEPLOYMENT });
    redis.defineCommand('gwRenewAttempt', { numberOfKeys: 2, lua: RENEW_ATTEMPT });
    this.cmd = redis as RedisClient & PoolCommands;
  }

  /**
   * A pool of one without limits has nothing to decide or count: its pick, made here without Redis
   * and without an await (the attempt's request then reaches undici in the turn the job began);
   * undefined for any other pool (`pick`).
   */
  pickLocal(step: RouteStep, estimatedTokens: number): Pick | undefined {
    if (!pickedLocally(step)) return undefined;
    const only = step.deployments[0];
    return { kind: 'picked', index: 0, probe: false, lease: { poolId: step.poolId, deployment: only.name, member: '', minute: minuteOf(Date.now()), estimatedTokens, cooldowns: false, startedAt: Date.now(), local: true } };
  }

  /**
   * Takes a deployment for one attempt; its in-flight entry expires after the in-flight lease unless
   * `hold` renews it. A `retry` (the request's attempt after a failed one) is given a deployment's probe
   * only when no healthy deployment can take it.
   */
  async pick(step: RouteStep, requestId: string, estimatedTokens: number, rand: () => number = Math.random, retry = false): Promise<Pick> {
    const local = this.pickLocal(step, estimatedTokens);
    if (local) return local;
    const minute = minuteOf(Date.now());
    const cooldowns = step.deployments.length > 1;
    const k: string[] = [];
    const limits: number[] = [];
    for (const d of step.deployments) {
      k.push(...this.keysOf(step.poolId, d.name, minute));
      limits.push(d.weight, d.priority, d.maxConcurrency ?? 0, d.rpm ?? 0, d.tpm ?? 0);
    }
    const member = `${requestId}:${crypto.randomBytes(4).toString('hex')}`;
    const r = await this.cmd.gwPickDeployment(k.length, ...k, member, this.t.inflightLeaseMs, estimatedTokens, rand(), rand(), this.t.probeLeaseMs, cooldowns ? (retry ? 2 : 1) : 0, ...limits);
    if (r[0] === 1) {
      const index = r[1] - 1;
      return { kind: 'picked', index, probe: r[2] === 1, lease: { poolId: step.poolId, deployment: step.deployments[index].name, member, minute, estimatedTokens, cooldowns, startedAt: Number(r[3]), probe: r[2] === 1 } };
    }
    return { kind: r[0] === 2 ? 'cooling' : 'limited', waitMs: Math.max(1, r[1]) };
  }

  /** Ends an attempt: frees its in-flight slot, corrects its token count, and gives the health verdict. */
  async settle(lease: AttemptLease, verdict: Verdict, cooldownMs: number | undefined, actualTokens?: number): Promise<{ fails: number; cooldownMs: number }> {
    if (lease.local) return { fails: 0, cooldownMs: 0 };
    const [health, inflight, , tpm] = this.keysOf(lease.poolId, lease.deployment, lease.minute);
    const delta = actualTokens === undefined ? 0 : actualTokens - lease.estimatedTokens;
    const r = await this.cmd.gwSettleDeployment(health, inflight, tpm, lease.member, verdict, cooldownMs ?? -1, this.t.backoffBaseMs, this.t.backoffMaxMs, delta, lease.cooldowns ? 1 : 0, lease.startedAt);
    return { fails: r[0], cooldownMs: r[1] };
  }

  /**
   * Keeps an attempt's in-flight entry alive while it runs (renewed every third of the lease, like
   * the job lock): a worker that dies mid-attempt stops counting toward the deployment's
   * concurrency one lease later, not at the request's deadline. A probe's lease is renewed the same
   * way (every third of the shorter lease): a probe that outlives its first lease keeps the deployment
   * to itself, and a dead worker's probe lapses one probe lease later. Returns the function that stops it.
   */
  hold(lease: AttemptLease): () => void {
    if (lease.local) return () => undefined;
    const inflight = keys.poolDeployment(lease.poolId, lease.deployment, 'inflight');
    const health = keys.poolDeployment(lease.poolId, lease.deployment, 'health');
    const probeMs = lease.probe ? this.t.probeLeaseMs : 0;
    const every = Math.min(this.t.inflightLeaseMs, probeMs || Infinity);
    const timer = setInterval(() => {
      this.cmd.gwRenewAttempt(inflight, health, lease.member, this.t.inflightLeaseMs, probeMs).catch(() => undefined);
    }, Math.max(100, Math.floor(every / 3)));
    timer.unref();
    return () => clearInterval(timer);
  }

  /**
   * A probe that started answering (its first streamed chunk): the deployment is back for everyone
   * now, not only when a long stream ends. The attempt itself is still settled at its end.
   */
  async markUp(lease: AttemptLease): Promise<void> {
    if (lease.cooldowns) await this.cmd.del(keys.poolDeployment(lease.poolId, lease.deployment, 'health'));
  }

  /** The live state of a pool's deployments (management API). */
  async inspect(poolId: string, names: string[]): Promise<Array<{ name: string; inFlight: number; fails: number; coolingForMs: number; probing: boolean; rpmUsed: number; tpmUsed: number }>> {
    const now = Date.now();
    const minute = minuteOf(now);
    const pipe = this.cmd.pipeline();
    for (const n of names) {
      const [h, f, rk, tk] = this.keysOf(poolId, n, minute);
      pipe.hmget(h, 'until', 'fails', 'probe').zcount(f, now, '+inf').get(rk).get(tk);
    }
    const out = (await pipe.exec()) ?? [];
    return names.map((name, i) => {
      const [u, fails, probe] = (out[i * 4][1] as Array<string | null>).map((v) => Number(v ?? 0));
      return {
        name,
        inFlight: Number(out[i * 4 + 1][1]),
        fails,
        coolingForMs: Math.max(0, u - now),
        probing: probe > now,
        rpmUsed: Number(out[i * 4 + 2][1] ?? 0),
        tpmUsed: Number(out[i * 4 + 3][1] ?? 0),
      };
    });
  }

  private keysOf(poolId: string, name: string, minute: number): [string, string, string, string] {
    return [
      keys.poolDeployment(poolId, name, 'health'),
      keys.poolDeployment(poolId, name, 'inflight'),
      keys.poolDeployment(poolId, name, `rpm:${minute}`),
      keys.poolDeployment(poolId, name, `tpm:${minute}`),
    ];
  }
}
