/**
 * reserve-limits-7: one admission decision for a key (its project, its member), atomic. Every key
 * carries the org's hash tag, so a Redis Cluster keeps them in one slot.
 * KEYS[1] key budget hash (spent, reserved)  KEYS[2] project budget hash (each only read when its limit is set)
 * KEYS[3] this minute's request count  KEYS[4] this minute's token count
 * KEYS[5] reservations hash (request id → JSON)  KEYS[6] reservation expiries zset (request id → ms)
 * KEYS[7] the member's budget hash  KEYS[8] the member's request count of this minute  KEYS[9] their token count
 * (the member's limits: docs/keys.md "Member limits", counted over all the member's keys in the org;
 * where the member has no such limit the caller passes the key's own keys there, never touched)
 * ARGV[1] now (ms)  ARGV[2] worst-case cost (micro-dollars)  ARGV[3] key budget (-1 none)
 * ARGV[4] project budget (-1 none)  ARGV[5] rpm (-1 none)  ARGV[6] tpm (-1 none)
 * ARGV[7] input tokens counted  ARGV[8] ms to the end of the minute  ARGV[9] budget hashes' TTL (s, -1 none)
 * ARGV[10] request id  ARGV[11] reservation (JSON: k, p, m, a, ...)  ARGV[12] reservation lifetime (ms)
 * ARGV[13] member budget (-1 none)  ARGV[14] member rpm (-1 none)  ARGV[15] member tpm (-1 none)
 * First gives back reservations that outlived their lifetime (a request whose usage never came).
 * Returns {verdict, requests, tokens, member requests, member tokens, ...}: the minute's counts (-1
 * where that limit is not set; the request's own counts included when it was admitted) and then
 * {'cold', 'key'|'project'|'member'} when a budget hash does not exist yet (the caller seeds it from
 * the ledger and asks again), {'rpm'|'tpm', ms, 'key'|'member'}, {'budget', 'key'|'project'|'member',
 * spent, reserved}, or {'ok'} (the request counted, its worst case reserved on every budget).
 */
export const RESERVE_LIMITS = `
local now = tonumber(ARGV[1])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', now)) do
  local r = redis.call('HGET', KEYS[5], id)
  if r then
    local d = cjson.decode(r)
    for _, key in ipairs({d.k, d.p, d.m or ''}) do
      if key ~= '' and redis.call('EXISTS', key) == 1 then redis.call('HINCRBYFLOAT', key, 'reserved', -d.a) end
    end
    redis.call('HDEL', KEYS[5], id)
  end
  redis.call('ZREM', KEYS[6], id)
end
local keyLimit, projLimit, memLimit = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[13])
if keyLimit >= 0 and redis.call('EXISTS', KEYS[1]) == 0 then return {'cold', '-1', '-1', '-1', '-1', 'key'} end
if projLimit >= 0 and redis.call('EXISTS', KEYS[2]) == 0 then return {'cold', '-1', '-1', '-1', '-1', 'project'} end
if memLimit >= 0 and redis.call('EXISTS', KEYS[7]) == 0 then return {'cold', '-1', '-1', '-1', '-1', 'member'} end
local rpm, tpm, input = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local mrpm, mtpm = tonumber(ARGV[14]), tonumber(ARGV[15])
local requests = rpm >= 0 and tonumber(redis.call('GET', KEYS[3]) or '0') or -1
local tokens = tpm >= 0 and tonumber(redis.call('GET', KEYS[4]) or '0') or -1
local mrequests = mrpm >= 0 and tonumber(redis.call('GET', KEYS[8]) or '0') or -1
local mtokens = mtpm >= 0 and tonumber(redis.call('GET', KEYS[9]) or '0') or -1
local function answer(verdict, ...)
  return {verdict, tostring(requests), tostring(tokens), tostring(mrequests), tostring(mtokens), ...}
end
if rpm >= 0 and requests + 1 > rpm then return answer('rpm', ARGV[8], 'key') end
if mrpm >= 0 and mrequests + 1 > mrpm then return answer('rpm', ARGV[8], 'member') end
if tpm >= 0 and tokens + input > tpm then return answer('tpm', ARGV[8], 'key') end
if mtpm >= 0 and mtokens + input > mtpm then return answer('tpm', ARGV[8], 'member') end
local cost = tonumber(ARGV[2])
local function fits(key, limit)
  if limit < 0 then return true end
  local spent = tonumber(redis.call('HGET', key, 'spent') or '0')
  local reserved = tonumber(redis.call('HGET', key, 'reserved') or '0')
  return spent + reserved + cost <= limit, spent, reserved
end
local ok, spent, reserved = fits(KEYS[1], keyLimit)
if not ok then return answer('budget', 'key', tostring(spent), tostring(reserved)) end
ok, spent, reserved = fits(KEYS[2], projLimit)
if not ok then return answer('budget', 'project', tostring(spent), tostring(reserved)) end
ok, spent, reserved = fits(KEYS[7], memLimit)
if not ok then return answer('budget', 'member', tostring(spent), tostring(reserved)) end
if rpm >= 0 then requests = redis.call('INCR', KEYS[3]); redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[8]) + 1000) end
if tpm >= 0 then tokens = redis.call('INCRBY', KEYS[4], input); redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[8]) + 1000) end
if mrpm >= 0 then mrequests = redis.call('INCR', KEYS[8]); redis.call('PEXPIRE', KEYS[8], tonumber(ARGV[8]) + 1000) end
if mtpm >= 0 then mtokens = redis.call('INCRBY', KEYS[9], input); redis.call('PEXPIRE', KEYS[9], tonumber(ARGV[8]) + 1000) end
if keyLimit >= 0 or projLimit >= 0 or memLimit >= 0 or tpm >= 0 or mtpm >= 0 then
  if keyLimit >= 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'reserved', cost) end
  if projLimit >= 0 then redis.call('HINCRBYFLOAT', KEYS[2], 'reserved', cost) end
  if memLimit >= 0 then redis.call('HINCRBYFLOAT', KEYS[7], 'reserved', cost) end
  redis.call('HSET', KEYS[5], ARGV[10], ARGV[11])
  redis.call('ZADD', KEYS[6], now + tonumber(ARGV[12]), ARGV[10])
  local ttl = tonumber(ARGV[9])
  if ttl > 0 then
    if keyLimit >= 0 then redis.call('EXPIRE', KEYS[1], ttl) end
    if projLimit >= 0 then redis.call('EXPIRE', KEYS[2], ttl) end
    if memLimit >= 0 then redis.call('EXPIRE', KEYS[7], ttl) end
  end
end
return answer('ok')
`;

/**
 * settle-limits-4: a reservation ends. KEYS[1] reservations hash  KEYS[2] expiries zset
 * KEYS[3] the key's token count of the current minute  KEYS[4] the member's (counted only when the
 * reservation names a member with a tpm: its `u`)
 * ARGV[1] request id  ARGV[2] real cost (micro-dollars; -1: released, nothing spent)
 * ARGV[3] tokens to add to the minute's count (output, and input beyond what was counted; the count
 * is made when this minute has none yet, as a request that ends in a new minute's first moments does)
 * ARGV[4] the minute count's lifetime (ms) when this makes it
 * Settling moves the reservation to `spent` at its real cost on each budget it holds (key, project,
 * member), once (a reservation already settled or expired is left alone: 0). Releasing (-1) gives
 * the reserved amount back but keeps the record, at zero, until it expires: a usage event that
 * still arrives (the worker delivered as the pod gave up) is then counted as spent instead of lost.
 */
export const SETTLE_LIMITS = `
local r = redis.call('HGET', KEYS[1], ARGV[1])
if not r then return 0 end
local d = cjson.decode(r)
local cost = tonumber(ARGV[2])
for _, key in ipairs({d.k, d.p, d.m or ''}) do
  if key ~= '' and redis.call('EXISTS', key) == 1 then
    if d.a > 0 then redis.call('HINCRBYFLOAT', key, 'reserved', -d.a) end
    if cost > 0 then redis.call('HINCRBYFLOAT', key, 'spent', cost) end
  end
end
if cost < 0 then
  d.a = 0
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(d))
  return 1
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local extra = tonumber(ARGV[3])
if extra ~= 0 then
  for _, key in ipairs(d.u and {KEYS[3], KEYS[4]} or {KEYS[3]}) do
    redis.call('INCRBY', key, extra)
    if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, tonumber(ARGV[4])) end
  end
end
return 1
`;

/**
 * uncount-limits-2: a request refused after it was counted (its lane was full: nothing was sent) leaves
 * its minute. KEYS[1] that minute's request count  KEYS[2] its token count  KEYS[3], KEYS[4] the
 * member's  ARGV[1] requests (0 or 1)  ARGV[2] tokens  ARGV[3], ARGV[4] the member's. Only counts
 * that still exist go down, never below zero (a minute that ended is gone).
 */
export const UNCOUNT_LIMITS = `
local function down(key, n)
  if n <= 0 or redis.call('EXISTS', key) == 0 then return end
  local left = tonumber(redis.call('DECRBY', key, n))
  if left < 0 then redis.call('INCRBY', key, -left) end
end
down(KEYS[1], tonumber(ARGV[1]))
down(KEYS[2], tonumber(ARGV[2]))
down(KEYS[3], tonumber(ARGV[3]))
down(KEYS[4], tonumber(ARGV[4]))
return 1
`;
