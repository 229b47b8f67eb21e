import { expect } from 'chai';
import fs from 'fs';
import path from 'path';
import calculateSlot from 'cluster-key-slot';
import { keys } from '../../shared/redis/keys';
import { ALL_QUEUES, SHARD_TAGS, isSharded, shardName } from '../../shared/queues/names';
import { ACQUIRE_LEASE, RENEW_LEASES } from '../../shared/lanes/scripts';
import { CLAIM_HELD, GIVE_UP, PUBLISH_WITH_USAGE } from '../../shared/metering/usage-outbox';
import { PUBLISH_RESULT } from '../../shared/queues/reply-store';
import { SEARCH_GATE, SEARCH_RELEASE, SEARCH_RELEASE_HELD, SEARCH_SETTLE_HELD } from '../../shared/search/gate-script';
import { PICK_DEPLOYMENT, RENEW_ATTEMPT, SETTLE_DEPLOYMENT } from '../../shared/routing/scripts';
import { RESERVE_LIMITS, SETTLE_LIMITS, UNCOUNT_LIMITS } from '../../shared/limits/limits-script';
import { KEEP_CANCELS, TAKE_CANCEL } from '../../api/routes/mcp/kept-cancels';
import { OWNED_IDS, RECORD_IDS } from '../../shared/tenancy/handed-out-ids';
import { LUA_NOW_MS } from '../../shared/redis/lua-clock';

/**
 * On a Redis Cluster a script, MULTI or pipeline may touch one slot only. Every Lua script of the
 * gateway is found by scanning the compiled modules of shared/, its key list is read from the script
 * text (the KEYS[n] it uses, and every redis.call must name its key through KEYS), and the keys the
 * code passes for it must all hash to one slot.
 */
const ORG = '5b0c4e8e-2f1d-4c47-9d41-0e8f6f1c2a10';
const replyChannels = () => Array.from({ length: 8 }, (_, i) => keys.replyChannel('pod-1', i));
const KEY_LISTS: Record<string, () => string[][]> = {
  [ACQUIRE_LEASE]: () => [[keys.lease(ORG, 'chat', 'interactive')]],
  [RENEW_LEASES]: () => [[keys.lease(ORG, 'chat', 'background')]],
  // one key list per outbox stream: the stream, the pod reply channel paired with it, the
  // request's fate, held-usage and kept-result keys and the channel's epoch (named after that channel)
  [PUBLISH_WITH_USAGE]: () =>
    replyChannels().map((ch) => [keys.usageOutboxFor(ch), ch, keys.usageFate(ch, 'req_1'), keys.usageHeld(ch, 'req_1'), keys.replyResult(ch, 'req_1'), keys.replyEpoch(ch)]),
  // a result with no usage event: its kept copy, the reply channel and the channel's epoch
  [PUBLISH_RESULT]: () => replyChannels().map((ch) => [keys.replyResult(ch, 'req_1'), ch, keys.replyEpoch(ch)]),
  [GIVE_UP]: () => replyChannels().map((ch) => [keys.usageFate(ch, 'req_1')]),
  [CLAIM_HELD]: () => replyChannels().map((ch) => [keys.usageHeld(ch, 'req_1'), keys.usageOutboxFor(ch)]),
  // the org's period counters (all, platform, member), its abuse-limit window and a batch line's held marker (or the `all` counter again)
  [SEARCH_GATE]: () => [
    [keys.searchCount(ORG, '2026-11', 'all'), keys.searchCount(ORG, '2026-11', 'platform'), keys.searchCount(ORG, '2026-11', 'member:u1'), keys.searchRate(ORG), keys.searchHeld(ORG, 'batch_req_1_0.search1')],
    [keys.searchCount(ORG, '2026-11', 'all'), keys.searchCount(ORG, '2026-11', 'platform'), keys.searchCount(ORG, '2026-11', 'member:u1'), keys.searchRate(ORG), keys.searchCount(ORG, '2026-11', 'all')],
  ],
  [SEARCH_RELEASE]: () => [[keys.searchCount(ORG, '2026-11', 'all'), keys.searchCount(ORG, '2026-11', 'platform'), keys.searchCount(ORG, '2026-11', 'member:u1')]],
  [SEARCH_RELEASE_HELD]: () => [[keys.searchCount(ORG, '2026-11', 'all'), keys.searchCount(ORG, '2026-11', 'platform'), keys.searchCount(ORG, '2026-11', 'member:u1'), keys.searchHeld(ORG, 'batch_req_1_0.search1')]],
  [SEARCH_SETTLE_HELD]: () => [[keys.searchHeld(ORG, 'batch_req_1_0.search1')]],
  // a model pool: every deployment's health, in-flight set and minute counters (shared/routing/pool-state.ts)
  [PICK_DEPLOYMENT]: () => [['east', 'west', 'spare'].flatMap((d) => ['health', 'inflight', 'rpm:29000000', 'tpm:29000000'].map((w) => keys.poolDeployment(ORG, d, w)))],
  [SETTLE_DEPLOYMENT]: () => [['health', 'inflight', 'tpm:29000000'].map((w) => keys.poolDeployment(ORG, 'east', w))],
  [RENEW_ATTEMPT]: () => [[keys.poolDeployment(ORG, 'east', 'inflight'), keys.poolDeployment(ORG, 'east', 'health')]],
  // a key's, its project's and its member's budget windows, the key's and the member's rpm/tpm minute, the org's reservations (shared/limits/limits.ts)
  [RESERVE_LIMITS]: () => [['kbud:k1:day:2026-11-25', 'pbud:p1:month:2026-11', 'rpm:k1:29000000', 'tpm:k1:29000000', 'res', 'resx', 'mbud:u1:total', 'mrpm:u1:29000000', 'mtpm:u1:29000000'].map((w) => keys.limits(ORG, w))],
  [SETTLE_LIMITS]: () => [['res', 'resx', 'tpm:k1:29000000', 'mtpm:u1:29000000'].map((w) => keys.limits(ORG, w))],
  [UNCOUNT_LIMITS]: () => [['rpm:k1:29000000', 'tpm:k1:29000000', 'mrpm:u1:29000000', 'mtpm:u1:29000000'].map((w) => keys.limits(ORG, w))],
  // an API key's kept MCP cancels (api/routes/mcp/kept-cancels.ts): one key each
  [KEEP_CANCELS]: () => [[keys.mcpKeptCancels('key-1')]],
  [TAKE_CANCEL]: () => [[keys.mcpKeptCancels('key-1')]],
  // the ids the gateway handed an org on the platform's shared workspace and the workspace each was made in (shared/tenancy/handed-out-ids.ts): the org's two keys
  [RECORD_IDS]: () => [[keys.handedOutIds('org-1'), keys.handedOutWorkspaces('org-1')]],
  [OWNED_IDS]: () => [[keys.handedOutIds('org-1'), keys.handedOutWorkspaces('org-1')]],
  // not a script: the lines that begin the scripts reading Redis's clock (shared/redis/lua-clock.ts); it names no key
  [LUA_NOW_MS]: () => [],
};

function luaScriptsIn(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...luaScriptsIn(full));
    else if (entry.name.endsWith('.js')) {
      for (const value of Object.values(require(full) as Record<string, unknown>)) {
        if (typeof value === 'string' && value.includes('redis.call(')) found.push(value);
      }
    }
  }
  return found;
}

const slots = (list: string[]) => new Set(list.map((k) => calculateSlot(k)));

describe('Redis Cluster: every script, MULTI and queue stays in one slot', () => {
  // shared/ holds nearly all; api/ and workers/ keep a few of their own (the MCP route's kept cancels)
  const scripts = ['shared', 'api', 'workers'].flatMap((d) => luaScriptsIn(path.resolve(__dirname, '../..', d)));

  it('finds the gateway’s Lua scripts, and knows the key list of each', () => {
    expect(scripts.length).to.be.at.least(3);
    for (const lua of scripts) expect(KEY_LISTS[lua], `a script with no key list in this test:\n${lua}`).to.be.a('function');
  });

  it('PICK_DEPLOYMENT: names its keys through KEYS (four per deployment), and a pool’s keys share one slot', () => {
    const locals = new Set(['h', 'f', 'rk', 'tk']);
    expect(PICK_DEPLOYMENT).to.include("local h, f, rk, tk = KEYS[4*i-3], KEYS[4*i-2], KEYS[4*i-1], KEYS[4*i]");
    const calls = [...PICK_DEPLOYMENT.matchAll(/redis\.call\(\s*'(\w+)'\s*,\s*([^,)]+)/g)];
    expect(calls.length).to.be.above(0);
    for (const [, command, firstArg] of calls) expect(locals.has(firstArg.trim()) || /^KEYS\[4\*pick(-\d)?\]$/.test(firstArg.trim()), `${command}'s key: ${firstArg}`).to.equal(true);
    for (const list of KEY_LISTS[PICK_DEPLOYMENT]()) expect(slots(list).size, list.join(' ')).to.equal(1);
  });

  // These also touch the budget windows a reservation record names (its `k`, `p` and `m`, written by the
  // reserve from KEYS[1], KEYS[2] and KEYS[7]): those keys are keys.limits(<the same org>, ...), in the same slot.
  // (UNCOUNT_LIMITS names its two keys through a local function's `key`.)
  for (const [name, lua] of Object.entries({ RESERVE_LIMITS, SETTLE_LIMITS, UNCOUNT_LIMITS })) {
    it(`${name}: the keys passed to it and the budget windows its reservations name share one slot`, () => {
      const calls = [...lua.matchAll(/redis\.call\(\s*'(\w+)'\s*,\s*([^,)]+)/g)];
      expect(calls.length).to.be.above(0);
      for (const [, command, firstArg] of calls) expect(firstArg.trim(), `${command}'s key`).to.match(/^(KEYS\[\d+\]|key)$/);
      for (const list of KEY_LISTS[lua]()) expect(slots([...list, keys.limits(ORG, 'kbud:k2:total'), keys.limits(ORG, 'pbud:p2:day:2026-11-25')]).size, list.join(' ')).to.equal(1);
    });
  }

  for (const [name, lua] of Object.entries({ ACQUIRE_LEASE, RENEW_LEASES, PUBLISH_WITH_USAGE, PUBLISH_RESULT, GIVE_UP, CLAIM_HELD, SEARCH_GATE, SEARCH_RELEASE, SEARCH_RELEASE_HELD, SEARCH_SETTLE_HELD, SETTLE_DEPLOYMENT, RENEW_ATTEMPT, KEEP_CANCELS, TAKE_CANCEL })) {
    it(`${name}: names every key through KEYS, and the keys passed to it share one slot`, () => {
      const used = [...lua.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
      // PUBSUB's key comes after its subcommand: redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[n])
      const calls = [...lua.matchAll(/redis\.call\(\s*'(\w+)'\s*,\s*(?:'SHARDNUMSUB'\s*,\s*)?([^,)]+)/g)];
      expect(calls.length).to.be.above(0);
      for (const [, command, firstArg] of calls) expect(firstArg.trim(), `${command}'s key`).to.match(/^KEYS\[\d+\]$/);
      for (const list of KEY_LISTS[lua]()) {
        expect(list).to.have.length(Math.max(...used));
        expect(slots(list).size, list.join(' ')).to.equal(1);
      }
    });
  }

  it('gives each queue and each queue shard a slot of its own, its cancel channel in it', () => {
    const names = ALL_QUEUES.flatMap((q) => (isSharded(q) ? SHARD_TAGS[q].map((_, i) => shardName(q, i)) : [q]));
    const queueSlots = names.map((q) => {
      const prefix = keys.bullPrefix(q);
      const own = slots([`${prefix}:${q}:wait`, `${prefix}:${q}:active`, `${prefix}:${q}:123`, `${prefix}:${q}:events`, keys.cancelChannel(q)]);
      expect(own.size, q).to.equal(1);
      return [...own][0];
    });
    expect(new Set(queueSlots).size).to.equal(names.length);
  });

  it('keeps each outbox stream with its dead letters (drainer MULTI) and the cache epoch with its channel', () => {
    for (let i = 0; i < 8; i++) expect(slots([keys.usageOutbox(i), keys.usageDeadLetters(i)]).size).to.equal(1);
    expect(slots(Array.from({ length: 8 }, (_, i) => keys.usageOutbox(i))).size, 'streams in different slots').to.equal(8);
    expect(slots([keys.cacheEpoch(), keys.cacheChannel()]).size).to.equal(1);
  });
});
