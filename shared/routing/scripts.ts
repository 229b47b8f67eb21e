import { LUA_NOW_MS } from '../redis/lua-clock';

/**
 * pick-deployment-(4N)
 * KEYS[4i-3..4i] of deployment i: health hash {until, fails, since, probe, prober}, in-flight zset (member = attempt,
 * score = its expiry), rpm counter and tpm counter of the current minute.
 * ARGV[1] attempt id  ARGV[2] in-flight lease (ms: the entry expires unless renewed)  ARGV[3] estimated tokens  ARGV[4], ARGV[5] two
 * uniform randoms in [0,1)  ARGV[6] probe lease (ms)  ARGV[7] cooldowns on (1, or 2: on, and the pick is a retry,
 * which takes a probe only when no candidate is healthy; 0: off)
 * ARGV[8+5(i-1)..] of deployment i: weight, priority, max concurrency, rpm, tpm (0: no limit).
 * A deployment takes traffic when it is not cooling down (`until` passed; after a failure it takes
 * exactly one probe until the probe's verdict) and is under its limits. Among those of the best
 * (lowest) priority, two are drawn by weight and the one with fewer attempts in flight per unit of
 * weight wins.
 * The probe's attempt id is kept beside its lease (`prober`): only that attempt's settle ends the probe.
 * Returns {1, i, probe, now} when deployment i was taken (its counters moved), else {2, wait ms} when
 * every candidate is cooling or probing, {3, wait ms} when the rest are at their limits: 50 ms while
 * one is at its max_concurrency (an attempt may end at any moment), else until the minute turns (an
 * rpm or tpm count frees only then), or a cooling one's end when sooner.
 */
export const PICK_DEPLOYMENT = `
${LUA_NOW_MS}
local n = #KEYS / 4
local est = tonumber(ARGV[3])
local cooling = ARGV[7] ~= '0'
local best, cands, loads, probes = nil, {}, {}, {}
local wait, limited, lwait = nil, false, nil
for i = 1, n do
  local h, f, rk, tk = KEYS[4*i-3], KEYS[4*i-2], KEYS[4*i-1], KEYS[4*i]
  local b = 8 + 5 * (i - 1)
  local weight, prio, maxc, rpm, tpm = tonumber(ARGV[b]), tonumber(ARGV[b+1]), tonumber(ARGV[b+2]), tonumber(ARGV[b+3]), tonumber(ARGV[b+4])
  local ok, probe = true, 0
  if cooling then
    local hv = redis.call('HMGET', h, 'until', 'fails', 'probe')
    local untilMs, fails, probeUntil = tonumber(hv[1] or '0'), tonumber(hv[2] or '0'), tonumber(hv[3] or '0')
    if untilMs > now then
      ok = false
      if wait == nil or untilMs - now < wait then wait = untilMs - now end
    elseif fails > 0 then
      if probeUntil > now then
        ok = false
        local w = math.min(probeUntil - now, 100)
        if wait == nil or w < wait then wait = w end
      else
        probe = 1
      end
    end
  end
  if ok then
    redis.call('ZREMRANGEBYSCORE', f, '-inf', now)
    local load = redis.call('ZCARD', f)
    local usedTokens = tonumber(redis.call('GET', tk) or '0')
    local full = maxc > 0 and load >= maxc
    if full or (rpm > 0 and tonumber(redis.call('GET', rk) or '0') >= rpm) or (tpm > 0 and usedTokens > 0 and usedTokens + est > tpm) then
      ok = false
      limited = true
      -- an attempt in flight may end at any moment; a minute's rpm or tpm frees only when the minute turns
      local w = full and 50 or (60000 - now % 60000)
      if lwait == nil or w < lwait then lwait = w end
    end
    if ok then
      if best == nil or prio < best then
        best, cands = prio, {}
      end
      if prio == best then
        cands[#cands + 1] = i
        loads[i], probes[i] = load, probe
      end
    end
  end
end
if #cands == 0 then
  if limited then return {3, math.min(wait or lwait, lwait)} end
  return {2, wait or 50}
end
if ARGV[7] == '2' then
  -- a retry is not spent on a probe while a healthy deployment can take it
  local healthy = {}
  for _, i in ipairs(cands) do if probes[i] == 0 then healthy[#healthy + 1] = i end end
  if #healthy > 0 then cands = healthy end
end
local total = 0
for _, i in ipairs(cands) do total = total + tonumber(ARGV[8 + 5 * (i - 1)]) end
local function draw(r)
  local x = r * total
  for _, i in ipairs(cands) do
    x = x - tonumber(ARGV[8 + 5 * (i - 1)])
    if x < 0 then return i end
  end
  return cands[#cands]
end
local a, c = draw(tonumber(ARGV[4])), draw(tonumber(ARGV[5]))
local pick = a
-- fewer in flight per unit of weight, so that load does not undo the weights
if loads[c] / tonumber(ARGV[8 + 5 * (c - 1)]) < loads[a] / tonumber(ARGV[8 + 5 * (a - 1)]) then pick = c end
redis.call('ZADD', KEYS[4*pick-2], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[4*pick-2], tonumber(ARGV[2]) + 60000)
redis.call('INCR', KEYS[4*pick-1])
redis.call('PEXPIRE', KEYS[4*pick-1], 120000)
if est > 0 then
  redis.call('INCRBY', KEYS[4*pick], est)
  redis.call('PEXPIRE', KEYS[4*pick], 120000)
end
if probes[pick] == 1 then
  redis.call('HSET', KEYS[4*pick-3], 'probe', now + tonumber(ARGV[6]), 'prober', ARGV[1])
end
return {1, pick, probes[pick], now}
`;

/**
 * settle-deployment-3
 * KEYS[1] health hash  KEYS[2] in-flight zset  KEYS[3] tpm counter of the minute the attempt was counted in
 * ARGV[1] attempt id  ARGV[2] verdict: 'up' (answered: healthy again), 'down' (retryable failure),
 * 'none' (cancelled: no verdict)  ARGV[3] cooldown ms (-1: backoff)  ARGV[4] backoff base ms
 * ARGV[5] backoff max ms  ARGV[6] token correction  ARGV[7] cooldowns on (1|0)
 * ARGV[8] when the attempt was taken (Redis time, ms)
 * A probe lease is cleared only by the probe's own attempt (`prober`). One incident counts once: a
 * failure of an attempt taken before the current cooldown was set (`since`) neither adds to the
 * consecutive failures nor moves the cooldown (a burst of attempts in flight when a deployment
 * breaks is one failure, not one per attempt).
 * Returns {consecutive failures, cooldown ms (left)}.
 */
export const SETTLE_DEPLOYMENT = `
redis.call('ZREM', KEYS[2], ARGV[1])
local delta = tonumber(ARGV[6])
if delta ~= 0 and redis.call('EXISTS', KEYS[3]) == 1 then redis.call('INCRBY', KEYS[3], delta) end
if ARGV[7] ~= '1' then return {0, 0} end
if ARGV[2] == 'up' then
  redis.call('DEL', KEYS[1])
  return {0, 0}
end
if ARGV[2] == 'none' then
  if redis.call('HGET', KEYS[1], 'prober') == ARGV[1] then redis.call('HDEL', KEYS[1], 'probe', 'prober') end
  return {0, 0}
end
${LUA_NOW_MS}
local hv = redis.call('HMGET', KEYS[1], 'until', 'fails', 'since')
local untilMs, fails, since = tonumber(hv[1] or '0'), tonumber(hv[2] or '0'), tonumber(hv[3] or '0')
if fails > 0 and tonumber(ARGV[8]) <= since then return {fails, math.max(0, untilMs - now)} end
fails = redis.call('HINCRBY', KEYS[1], 'fails', 1)
local cool = tonumber(ARGV[3])
if cool < 0 then cool = math.min(tonumber(ARGV[5]), tonumber(ARGV[4]) * 2 ^ math.min(fails - 1, 30)) end
redis.call('HSET', KEYS[1], 'until', now + cool, 'since', now)
redis.call('HDEL', KEYS[1], 'probe', 'prober')
redis.call('PEXPIRE', KEYS[1], 86400000)
return {fails, cool}
`;

/**
 * renew-attempt-2
 * KEYS[1] in-flight zset  KEYS[2] health hash  ARGV[1] attempt id  ARGV[2] lease (ms)
 * ARGV[3] probe lease (ms; 0: the attempt is not a probe)
 * Moves a running attempt's expiry to now + lease (its worker is alive); an attempt already settled
 * or expired is not brought back. A probe that is still the deployment's probe (`prober`) has its
 * probe lease moved to now + probe lease too, so a long probe keeps it and no second probe goes out.
 * Returns 1 when renewed.
 */
export const RENEW_ATTEMPT = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
${LUA_NOW_MS}
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease + 60000 then redis.call('PEXPIRE', KEYS[1], lease + 60000) end
local probe = tonumber(ARGV[3])
if probe > 0 and redis.call('HGET', KEYS[2], 'prober') == ARGV[1] then redis.call('HSET', KEYS[2], 'probe', now + probe) end
return 1
`;
