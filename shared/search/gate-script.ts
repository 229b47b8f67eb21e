/**
 * search-gate-5: one entitlement decision, atomic (Redis runs one script at a time).
 * Every key carries the org's hash tag, so a Redis Cluster keeps them in one slot.
 * KEYS[1] period count of all searches  KEYS[2] period count of platform-key searches
 * KEYS[3] period count of the member's searches (the member key, or KEYS[1] again when none)
 * KEYS[4] this minute's count (abuse limit)
 * KEYS[5] a batch line's search: its held marker (`<token>:<class>`); KEYS[1] again otherwise
 * ARGV[1] own key (1|0)  ARGV[2] allowance  ARGV[3] overage on (1|0)  ARGV[4] org monthly limit (-1 none)
 * ARGV[5] member cap (-1 none)  ARGV[6] has member (1|0)  ARGV[7] period counters' TTL (s)
 * ARGV[8] per-minute limit (-1 none)  ARGV[9] the held marker's token ('' when not a batch line's)
 * Returns {'cold'} when a period counter does not exist yet (the caller seeds it from the ledger and
 * asks again), {'rate', ttl}, {'limit'}, {'cap'}, {'allowance'}, or {'ok', class}.
 * A batch line's search already counted under its id (its runner died before the line was recorded,
 * and the line runs again under the same request id) is not counted again: the marker passes to
 * the new token, with the class it was counted in (docs/batches.md "Searches").
 */
export const SEARCH_GATE = `
local held = ARGV[9] ~= ''
if held then
  local was = redis.call('GET', KEYS[5])
  if was then
    local counted = string.match(was, ':(.*)$')
    redis.call('SET', KEYS[5], ARGV[9] .. ':' .. counted, 'KEEPTTL')
    return {'ok', counted}
  end
end
local member = ARGV[6] == '1'
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 0 or (member and redis.call('EXISTS', KEYS[3]) == 0) then
  return {'cold'}
end
local rateLimit = tonumber(ARGV[8])
if rateLimit >= 0 then
  local n = tonumber(redis.call('GET', KEYS[4]) or '0')
  if n >= rateLimit then
    local ttl = redis.call('TTL', KEYS[4])
    if ttl < 1 then ttl = 1 end
    return {'rate', ttl}
  end
end
local all = tonumber(redis.call('GET', KEYS[1]))
local limit = tonumber(ARGV[4])
if limit >= 0 and all >= limit then return {'limit'} end
local cap = tonumber(ARGV[5])
if member and cap >= 0 and tonumber(redis.call('GET', KEYS[3])) >= cap then return {'cap'} end
local class = 'own_key'
if ARGV[1] ~= '1' then
  if tonumber(redis.call('GET', KEYS[2])) < tonumber(ARGV[2]) then
    class = 'allowance'
  elseif ARGV[3] == '1' then
    class = 'overage'
  else
    return {'allowance'}
  end
  redis.call('INCR', KEYS[2])
end
redis.call('INCR', KEYS[1])
if member then redis.call('INCR', KEYS[3]) end
if rateLimit >= 0 then
  if redis.call('INCR', KEYS[4]) == 1 then redis.call('EXPIRE', KEYS[4], 60) end
end
if held then redis.call('SET', KEYS[5], ARGV[9] .. ':' .. class, 'EX', ARGV[7]) end
return {'ok', class}
`;

/** The counters KEYS[1..3] given one search back (ARGV[1] own key, ARGV[2] has member): SEARCH_RELEASE's and SEARCH_RELEASE_HELD's. */
const GIVE_BACK = `if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECR', KEYS[1]) end
if ARGV[1] ~= '1' and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DECR', KEYS[2]) end
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then redis.call('DECR', KEYS[3]) end
`;

/**
 * search-release-3: gives back a reservation whose search failed (nothing was charged).
 * KEYS as above; ARGV[1] own key (1|0)  ARGV[2] has member (1|0). The minute counter is not given back.
 */
export const SEARCH_RELEASE = `
${GIVE_BACK}return 1
`;

/**
 * search-release-held-1: gives back a batch line's search (its held marker KEYS[4]) once, whoever
 * asks: the attempt that reserved it (ARGV[3] its token: nothing when the marker has passed to a later
 * attempt of the line) or the runner that finds it left by a dead one (ARGV[3] ''). The counters
 * (KEYS[1..3] as SEARCH_RELEASE) go down only when the marker was there, so never twice.
 * ARGV[1] own key (1|0)  ARGV[2] has member (1|0)
 */
export const SEARCH_RELEASE_HELD = `
local was = redis.call('GET', KEYS[4])
if not was then return 0 end
if ARGV[3] ~= '' and string.sub(was, 1, string.len(ARGV[3]) + 1) ~= ARGV[3] .. ':' then return 0 end
redis.call('DEL', KEYS[4])
${GIVE_BACK}return 1
`;

/** search-settle-held-1: a batch line's search charged with its answer keeps its count; its marker KEYS[1] goes (ARGV[1] the token). */
export const SEARCH_SETTLE_HELD = `
local was = redis.call('GET', KEYS[1])
if was and string.sub(was, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. ':' then redis.call('DEL', KEYS[1]) end
return 1
`;
